import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  CARD_PLACEHOLDER,
  createRedactor,
  IBAN_PLACEHOLDER,
  ibanValid,
  luhnValid,
  parseRedactPatterns,
  RedactPatternError,
  type RedactPattern,
} from '../src/privacy/redaction.js';
import { redactorOf } from '../src/privacy/redactor-of.js';
import { readTokens, saysAnyDigit } from '../src/privacy/spoken-digits.js';

const DOB: RedactPattern = { name: 'dob', regex: /\b\d{1,2}\.\d{1,2}\.\d{4}\b/ };
const CUSTOMER: RedactPattern = { name: 'customer', regex: /KD-\d{6}/ };

const numbers = createRedactor({ cards: true, ibans: true, patterns: [] });
const everything = createRedactor({ cards: true, ibans: true, patterns: [DOB, CUSTOMER] });

function redacted(text: string): string {
  return numbers.redact(text).text;
}

describe("the call core's redactor", () => {
  test('a text said again is redacted again: what held a number is never handed back as it was, among many texts', () => {
    const redact = redactorOf({ cards: true, ibans: true, patterns: [DOB] });
    const withCard = 'My card is 4111 1111 1111 1111, thanks.';
    const withDate = 'I was born on 1.2.1990.';
    const clean = (n: number): string => `Order ${n} was sent on Monday, four parcels.`;
    for (let round = 0; round < 3; round++) {
      for (let n = 0; n < 40; n++) expect(redact(clean(n))).toBe(clean(n));
      expect(redact(withCard)).toBe(`My card is ${CARD_PLACEHOLDER}, thanks.`);
      expect(redact(withDate)).toBe('I was born on [dob].');
      expect(redact(clean(39))).toBe(clean(39));
    }
  });
});

describe('card numbers', () => {
  test.each([
    ['4111 1111 1111 1111'],
    ['4111-1111-1111-1111'],
    ['4111.1111.1111.1111'],
    ['4111111111111111'],
    ['5555 5555 5555 4444'],
    ['3782 822463 10005'],
    ['378282246310005'],
    ['6011 1111 1111 1117'],
    ['6011000990139424'],
    ['4012 8888 8888 1881'],
  ])('%s is redacted, the words around it kept', (card) => {
    expect(numbers.redact(`My card is ${card}, thanks.`)).toEqual({ text: `My card is ${CARD_PLACEHOLDER}, thanks.`, found: ['card'] });
  });

  test.each([
    ['English words', 'four one one one one one one one one one one one one one one one'],
    ['English words in groups', 'four one one one, one one one one, one one one one, one one one one'],
    ['English words with dashes', 'five-five-five-five five-five-five-five five-five-five-five four-four-four-four'],
    ['capitalised words', 'Four One One One One One One One One One One One One One One One'],
    ['German words', 'vier eins eins eins eins eins eins eins eins eins eins eins eins eins eins eins'],
    ['German words with "fünf"', 'fünf fünf fünf fünf, fünf fünf fünf fünf, fünf fünf fünf fünf, vier vier vier vier'],
    ['German words with "zwo"', 'zwo zwo zwo drei, null null drei eins, zwo zwo null null, drei zwo zwo zwo'],
    ['numerals and words mixed', '4111 one one one one one one one one 1111'],
    ['"double" and "triple"', 'four triple one, double one double one, one one one one, one triple one'],
    ['"doppel"', 'vier eins doppel eins, eins eins eins eins, eins eins eins eins, eins eins eins eins'],
    ['"oh" and "zero" for 0', 'six oh one one, zero zero zero nine, nine oh one three, nine four two four'],
    ['Amex spoken', 'three seven eight two, eight two two four six three, one zero zero zero five'],
  ])('spoken as %s', (_, spoken) => {
    expect(numbers.redact(`Okay, my card: ${spoken}. Thanks!`)).toEqual({ text: `Okay, my card: ${CARD_PLACEHOLDER}. Thanks!`, found: ['card'] });
  });

  test('a 16-digit number failing Luhn is left alone, grouped, plain or spoken', () => {
    for (const text of ['order 4111 1111 1111 1112', 'order 5555555555554445', 'order four one one one one one one one one one one one one one one two']) {
      expect(numbers.redact(text)).toEqual({ text, found: [] });
    }
  });

  test('a phone number is left alone though its digits pass Luhn', () => {
    expect(luhnValid('4915112345678')).toBe(true);
    for (const text of ['call me on +49 151 12345678', 'call me on +4915112345678', 'plus four nine one five one one two three four five six seven eight', '0049 151 12345678']) {
      expect(numbers.redact(text)).toEqual({ text, found: [] });
    }
  });

  test('digits said with the card (expiry date, security code) go with it', () => {
    expect(redacted('card 4111 1111 1111 1111 12 25 123 thanks')).toBe(`card ${CARD_PLACEHOLDER} thanks`);
    expect(redacted('card 4111 1111 1111 1111, 123')).toBe(`card ${CARD_PLACEHOLDER}`);
    expect(redacted('four one one one one one one one one one one one one one one one one two two five')).toBe(CARD_PLACEHOLDER);
    expect(redacted('the number 7 4111 1111 1111 1111')).toBe(`the number ${CARD_PLACEHOLDER}`);
  });

  test('a card glued to more digits by speech-to-text is found inside them', () => {
    expect(redacted('41111111111111111225')).toBe(CARD_PLACEHOLDER);
  });

  test('short digit runs are not cards', () => {
    for (const text of ['my order 123456 from 12.03.', 'PIN one two three four', '4111 1111 1111']) expect(redacted(text)).toBe(text);
  });

  test('any Luhn-valid card, however it is written and spoken, is redacted', () => {
    const words = [
      ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'],
      ['null', 'eins', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun'],
    ] as const;
    const writtenDigit = fc.record({ digit: fc.integer({ min: 0, max: 9 }), spoken: fc.boolean(), german: fc.boolean(), separator: fc.constantFrom(' ', ', ', '-', '') });
    fc.assert(
      fc.property(fc.array(writtenDigit, { minLength: 16, maxLength: 16 }), (written) => {
        // A Visa-like number: 4, fourteen digits, and the check digit that makes it pass Luhn.
        const body = written.slice(0, 15).map(({ digit }, i) => (i === 0 ? 4 : digit));
        const digits = [...body, luhnCheckDigit(body)];
        let said = '';
        let previousSpoken = false;
        written.forEach(({ spoken, german, separator }, i) => {
          const digit = digits[i] ?? 0;
          // Two words need a space between them; two numerals may run together.
          if (i > 0) said += separator === '' && (spoken || previousSpoken) ? ' ' : separator;
          said += spoken ? words[german ? 1 : 0][digit] : String(digit);
          previousSpoken = spoken;
        });
        expect(redacted(`Hi, it is ${said}. Bye`)).toBe(`Hi, it is ${CARD_PLACEHOLDER}. Bye`);
      }),
      { numRuns: 300 },
    );
  });
});

describe('numbers as speech services write them: normalised before matching', () => {
  test.each([
    ['Arabic-Indic digits', '٤١١١ ١١١١ ١١١١ ١١١١'],
    ['Persian digits', '۴۱۱۱ ۱۱۱۱ ۱۱۱۱ ۱۱۱۱'],
    ['Devanagari digits', '४१११ ११११ ११११ ११११'],
    ['full-width digits', '４１１１ １１１１ １１１１ １１１１'],
    ['full-width digits run together', '４１１１１１１１１１１１１１１１'],
    ['mathematical digits (outside the BMP)', '𝟒𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏'],
    ['scripts mixed', '4111 ١١١١ ۱۱۱۱ １１１１'],
    ['slashes', '4111/1111/1111/1111'],
    ['underscores', '4111_1111_1111_1111'],
    ['plus signs', '4111+1111+1111+1111'],
    ['line breaks', '4111\n1111\r\n1111\u20281111'],
    ['zero-width spaces inside the groups', '41\u200b11\u200b1111\u200b1111\u200b1111'],
    ['zero-width joiners and word joiners', '4111\u200d1111 \u20601111\ufeff1111'],
    ['soft hyphens', '4111\u00ad1111\u00ad1111\u00ad1111'],
    ['direction marks around Arabic-Indic digits', '٤١١١\u200f ١١١١ \u200e١١١١ ١\u200f١١١'],
    ['pairs of words', 'forty-one eleven eleven eleven eleven eleven eleven eleven'],
    ['pairs without dashes', 'forty one eleven, eleven eleven, eleven eleven, eleven eleven'],
    ['pairs of forty-two', 'forty-two forty-two forty-two forty-two forty-two forty-two forty-two forty-two'],
    ['German pairs', 'einundvierzig elf elf elf elf elf elf elf'],
    ['German pairs of zweiundvierzig', 'zweiundvierzig zweiundvierzig zweiundvierzig zweiundvierzig zweiundvierzig zweiundvierzig zweiundvierzig zweiundvierzig'],
    ['pairs, digits and numerals mixed', 'forty-one one one 1111 eleven eleven one one one one'],
    ['full-width words', 'ｆｏｕｒ one one one 1111 1111 1111'],
  ])('%s', (_, card) => {
    expect(numbers.redact(`My card is ${card}, thanks.`)).toEqual({ text: `My card is ${CARD_PLACEHOLDER}, thanks.`, found: ['card'] });
  });

  test.each([
    ['full-width', 'ＤＥ８９ ３７０４ ００４４ ０５３２ ０１３０ ００'],
    ['Arabic-Indic digits', 'DE٨٩ ٣٧٠٤ ٠٠٤٤ ٠٥٣٢ ٠١٣٠ ٠٠'],
    ['zero-width spaces', 'DE89\u200b3704\u200b0044\u200b0532\u200b0130\u200b00'],
    ['slashes and a line break', 'DE89/3704/0044/0532\n0130/00'],
    ['pairs', 'D E eighty-nine thirty-seven zero four zero zero forty-four zero five thirty-two zero one thirty zero zero'],
  ])('an IBAN in %s', (_, iban) => {
    expect(numbers.redact(`Konto: ${iban}. Danke`)).toEqual({ text: `Konto: ${IBAN_PLACEHOLDER}. Danke`, found: ['iban'] });
  });

  test('a slash, underscore or plus with spaces around it stands between two things', () => {
    for (const text of ['order 4111 1111 / 1111 1111', 'order 4111 1111 + 1111 1111 1111 1111']) expect(redacted(text)).toBe(text);
    expect(redacted('4111 1111 1111 1111 _ 2')).toBe(`${CARD_PLACEHOLDER} _ 2`);
  });

  test('pairs read as their digits: what is no card stays as it was', () => {
    for (const text of ['nineteen ninety-nine, twenty twenty-four', 'ten to twenty minutes', 'Er ist einundvierzig und sie zwölf']) expect(redacted(text)).toBe(text);
    expect(readTokens('forty-one eleven twenty').map((token) => token.signs)).toEqual(['41', '11', '20']);
    expect(readTokens('einundvierzig, zwölf').map((token) => token.signs)).toEqual(['41', '12']);
  });

  test('digits of other scripts and format characters are read as ASCII digits and nothing', () => {
    expect(readTokens('٤١\u200b١١ ４２ 𝟗').map((token) => [token.signs, token.digits])).toEqual([
      ['4111', true],
      ['42', true],
      ['9', true],
    ]);
  });

  test('any Luhn-valid card, in any script, with any separator or format character, is redacted', () => {
    const zeros = [0x30, 0x660, 0x6f0, 0x966, 0xff10, 0x1d7ce];
    const joints = [' ', '', '-', '/', '_', '+', '\n', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', ' \u200e'];
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 14, maxLength: 14 }),
        fc.array(fc.record({ zero: fc.constantFrom(...zeros), joint: fc.constantFrom(...joints) }), { minLength: 16, maxLength: 16 }),
        (body, written) => {
          const digits = [5, ...body];
          digits.push(luhnCheckDigit(digits));
          const said = digits.map((digit, i) => `${i > 0 ? written[i]!.joint : ''}${String.fromCodePoint(written[i]!.zero + digit)}`).join('');
          expect(redacted(`Hi, it is ${said}. Bye`)).toBe(`Hi, it is ${CARD_PLACEHOLDER}. Bye`);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('IBANs', () => {
  test.each([
    ['DE89 3704 0044 0532 0130 00'],
    ['DE89370400440532013000'],
    ['de89370400440532013000'],
    ['DE89-3704-0044-0532-0130-00'],
    ['D E 89 3704 0044 0532 0130 00'],
    ['GB82 WEST 1234 5698 7654 32'],
    ['NL91 ABNA 0417 1643 00'],
    ['NO93 8601 1117 947'],
    ['MT84 MALT 0110 0001 2345 MTLC AST0 01S'],
    ['D E eight nine three seven zero four zero zero four four zero five three two zero one three zero zero zero'],
    ['D E acht neun drei sieben null vier doppel null vier vier null fünf drei zwei null eins drei null null null'],
    ['DE89 three seven zero four, oh oh four four, oh five three two, oh one three oh, oh oh'],
    ['G B eight two W E S T one two three four five six nine eight seven six five four three two'],
  ])('%s is redacted', (iban) => {
    expect(numbers.redact(`Konto: ${iban}. Danke`)).toEqual({ text: `Konto: ${IBAN_PLACEHOLDER}. Danke`, found: ['iban'] });
  });

  test('a wrong check digit, length or country is left alone', () => {
    for (const text of ['DE88 3704 0044 0532 0130 00', 'GB83 WEST 1234 5698 7654 32', 'DE89 3704 0044 0532 0130 0', 'XX89 3704 0044 0532 0130 00']) {
      expect(numbers.redact(text)).toEqual({ text, found: [] });
    }
  });

  test('an IBAN is not cut out of a longer code', () => {
    expect(redacted('DE89 3704 0044 0532 0130 0012')).toBe('DE89 3704 0044 0532 0130 0012');
    expect(redacted('DE89 3704 0044 0532 0130 00 12')).toBe(`${IBAN_PLACEHOLDER} 12`);
  });
});

describe('several things in one utterance', () => {
  test('two numbers are both redacted and the text between them kept', () => {
    expect(numbers.redact('Card 4111 1111 1111 1111 – and the IBAN, DE89 3704 0044 0532 0130 00; ok?')).toEqual({
      text: `Card ${CARD_PLACEHOLDER} – and the IBAN, ${IBAN_PLACEHOLDER}; ok?`,
      found: ['card', 'iban'],
    });
    expect(numbers.redact('first 4111 1111 1111 1111, second 5555 5555 5555 4444.')).toEqual({ text: `first ${CARD_PLACEHOLDER}, second ${CARD_PLACEHOLDER}.`, found: ['card'] });
  });

  test('found names each kind once, in the order of first appearance', () => {
    const result = everything.redact('KD-123456, born 1.2.1980, IBAN DE89370400440532013000, card 4111111111111111, KD-654321');
    expect(result.text).toBe(`[customer], born [dob], IBAN ${IBAN_PLACEHOLDER}, card ${CARD_PLACEHOLDER}, [customer]`);
    expect(result.found).toEqual(['customer', 'dob', 'iban', 'card']);
  });
});

describe('configured patterns', () => {
  test('every match is replaced by the name in brackets', () => {
    expect(everything.redact('geboren am 3.11.1975 oder 03.11.1975, Kundennummer KD-004711')).toEqual({
      text: 'geboren am [dob] oder [dob], Kundennummer [customer]',
      found: ['dob', 'customer'],
    });
  });

  test('a regex without the global flag still catches every match and is not changed', () => {
    const regex = /KD-\d{6}/;
    const redactor = createRedactor({ cards: false, ibans: false, patterns: [{ name: 'customer', regex }] });
    expect(redactor.redact('KD-000001 KD-000002 KD-000003').text).toBe('[customer] [customer] [customer]');
    expect(regex.flags).toBe('');
  });

  test('a shared global or sticky regex works on every call', () => {
    for (const regex of [/KD-\d{6}/g, /KD-\d{6}/y, /KD-\d{6}/gy]) {
      const redactor = createRedactor({ cards: false, ibans: false, patterns: [{ name: 'customer', regex }] });
      for (let i = 0; i < 3; i++) expect(redactor.redact('x KD-000001 y KD-000002').text).toBe('x [customer] y [customer]');
      expect(regex.lastIndex).toBe(0);
    }
  });

  test('a pattern overlapping a card number leaves no part of either', () => {
    const redactor = createRedactor({ cards: true, ibans: false, patterns: [{ name: 'ref', regex: /1111 ref \d+/ }] });
    expect(redactor.redact('4111 1111 1111 1111 ref 99 ok')).toEqual({ text: `${CARD_PLACEHOLDER} ok`, found: ['card', 'ref'] });
  });

  test('patterns that match nothing visible change nothing', () => {
    const redactor = createRedactor({ cards: false, ibans: false, patterns: [{ name: 'empty', regex: /x*/ }] });
    expect(redactor.redact('abc')).toEqual({ text: 'abc', found: [] });
  });
});

describe('what is enabled', () => {
  test('nothing enabled: inactive, and the text comes back as it was', () => {
    const off = createRedactor({ cards: false, ibans: false, patterns: [] });
    expect(off.active).toBe(false);
    expect(off.redact('4111 1111 1111 1111')).toEqual({ text: '4111 1111 1111 1111', found: [] });
  });

  test('any one kind makes it active', () => {
    expect(createRedactor({ cards: true, ibans: false, patterns: [] }).active).toBe(true);
    expect(createRedactor({ cards: false, ibans: true, patterns: [] }).active).toBe(true);
    expect(createRedactor({ cards: false, ibans: false, patterns: [DOB] }).active).toBe(true);
  });

  test('cards only leave IBANs, IBANs only leave cards', () => {
    const text = 'DE89 3704 0044 0532 0130 00 / 4111 1111 1111 1111';
    expect(createRedactor({ cards: true, ibans: false, patterns: [] }).redact(text).text).toBe(`DE89 3704 0044 0532 0130 00 / ${CARD_PLACEHOLDER}`);
    expect(createRedactor({ cards: false, ibans: true, patterns: [] }).redact(text).text).toBe(`${IBAN_PLACEHOLDER} / 4111 1111 1111 1111`);
  });

  test('nothing to redact returns the identical string', () => {
    const text = 'Hello, one moment, oh I see, ein Konto bei der Bank, 2 oder 3 Tage, double check that please.';
    const result = everything.redact(text);
    expect(result.text).toBe(text);
    expect(result.found).toEqual([]);
  });
});

describe('long input', () => {
  test('10,000 characters are redacted completely', () => {
    const utterance = 'card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, spoken five five five five five five five five five five five five four four four four; born 1.2.1980. ';
    const repeats = Math.ceil(10_000 / utterance.length);
    const text = utterance.repeat(repeats).slice(0, 10_000);
    const whole = Math.floor(10_000 / utterance.length);
    const once = everything.redact(utterance).text;
    expect(once).toBe(`card ${CARD_PLACEHOLDER}, IBAN ${IBAN_PLACEHOLDER}, spoken ${CARD_PLACEHOLDER}; born [dob]. `);
    const result = everything.redact(text);
    expect(result.found).toEqual(['card', 'iban', 'dob']);
    expect(result.text.startsWith(once.repeat(whole))).toBe(true);
  });

  test('10,000 characters of digits and digit words with no card in them finish', () => {
    // All threes: no window of 13 to 19 of them passes Luhn, so every place a card could start is tried.
    for (const text of ['3 '.repeat(5000), '3'.repeat(10_000), 'three '.repeat(1667), 'DE89 '.repeat(2000)]) {
      expect(numbers.redact(text).found).toEqual([]);
    }
  });
});

describe('parseRedactPatterns', () => {
  test('reads entries separated by newlines or ;;', () => {
    const patterns = parseRedactPatterns('dob=\\b\\d{1,2}\\.\\d{1,2}\\.\\d{4}\\b\n customer = KD-\\d{6} ;;ref_no=/ref-\\d+/i\r\n\n');
    expect(patterns.map(({ name, regex }) => [name, regex.source, regex.flags])).toEqual([
      ['dob', '\\b\\d{1,2}\\.\\d{1,2}\\.\\d{4}\\b', ''],
      ['customer', 'KD-\\d{6}', ''],
      ['ref_no', 'ref-\\d+', 'i'],
    ]);
  });

  test('the regex is everything after the first =, slashes included when not /…/flags', () => {
    const [pattern] = parseRedactPatterns('path=a=b/c/\\d+');
    expect(pattern?.regex.source).toBe('a=b\\/c\\/\\d+');
  });

  test('an empty string gives no patterns', () => {
    expect(parseRedactPatterns('')).toEqual([]);
    expect(parseRedactPatterns(' \n ;; ')).toEqual([]);
  });

  test('parsed patterns redact', () => {
    const redactor = createRedactor({ cards: false, ibans: false, patterns: parseRedactPatterns('customer=/kd-\\d{6}/i') });
    expect(redactor.redact('kd-123456').text).toBe('[customer]');
  });

  test.each([
    ['=\\d+', /pattern 1 .*empty name/],
    ['dob=\\d+\nbad name=x', /pattern 2 \(bad name\): the name may only have/],
    ['dob=(\\d+', /pattern 1 \(dob\): bad regex: Invalid regular expression/],
    ['dob=/\\d+/gq', /pattern 1 \(dob\): bad regex: .*flags/],
    ['dob=', /pattern 1 \(dob\): empty regex/],
    ['dob=\\d+;;dob=\\w+', /pattern 2 \(dob\): name already used by pattern 1/],
    ['just a regex', /pattern 1 \("just a regex"\): expected name=regex/],
  ])('%j is refused', (text, message) => {
    expect(() => parseRedactPatterns(text)).toThrow(RedactPatternError);
    expect(() => parseRedactPatterns(text)).toThrow(message);
  });
});

describe('the quick check for digits', () => {
  test('never misses a digit the tokenizer reads', () => {
    const piece = fc.constantFrom(
      'one', 'One', 'OH', 'ein', 'fünf', 'FÜNF', 'fuenf', 'x', 'é', '_', '7', ' ', ',', '-', '.', "'", 'ü', '\u0301', '𝐀', '😀', 'double', 'some', 'n', 'e',
      'forty', 'eleven', 'und', 'vierzig', 'elf', 'zwölf', '٤', '４', '𝟒', '\u200b', '\u00ad', 'ｆ', 'ｏｕｒ', '/', '+', '\n',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        if (readTokens(text).some((token) => token.digits)) expect(saysAnyDigit(text)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test('lets ordinary talk through without reading it', () => {
    expect(saysAnyDigit('Someone phoned John, keine Ahnung, meine Bestellung, fünfmal')).toBe(false);
    expect(saysAnyDigit('ich habe ein Konto')).toBe(true);
  });
});

describe('checksums', () => {
  test('luhnValid', () => {
    for (const digits of ['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '79927398713']) expect(luhnValid(digits)).toBe(true);
    for (const digits of ['4111111111111112', '79927398710', '', '4111 1111 1111 1111', 'abc']) expect(luhnValid(digits)).toBe(false);
  });

  test('ibanValid', () => {
    for (const iban of ['DE89 3704 0044 0532 0130 00', 'de89370400440532013000', 'GB82WEST12345698765432', 'FR14 2004 1010 0505 0001 3M02 606']) expect(ibanValid(iban)).toBe(true);
    for (const iban of ['DE88 3704 0044 0532 0130 00', 'DE89 3704 0044 0532 0130 0', 'XX89 3704 0044 0532 0130 00', 'DEAB 3704 0044 0532 0130 00', '', 'DE89-3704-0044-0532-0130-00']) expect(ibanValid(iban)).toBe(false);
  });
});

/** The digit that, appended, makes the number pass Luhn. */
function luhnCheckDigit(body: readonly number[]): number {
  const check = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].find((digit) => luhnValid([...body, digit].join('')));
  if (check === undefined) throw new Error('one check digit always fits');
  return check;
}
