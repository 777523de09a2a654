import { describe, expect, test } from 'vitest';
import { callerLinesOf, PARTIAL_PLACEHOLDER } from '../src/privacy/caller-lines.js';
import { CARD_PLACEHOLDER, createRedactor, IBAN_PLACEHOLDER } from '../src/privacy/redaction.js';
import type { CallerLine } from '../src/call/ports/redaction.js';

const redactor = createRedactor({ cards: true, ibans: true, patterns: [] });

/** The utterances of one call, read in turn; what each was written as, and as what each earlier one was amended. */
function read(...utterances: string[]): { lines: CallerLine[]; kept: string[]; provisional: string[] } {
  const reader = callerLinesOf(redactor)();
  const lines = utterances.map((text) => reader.said(text));
  const kept = lines.map((line) => line.text);
  for (const line of lines) for (const earlier of line.amended) kept[earlier.seq - 1] = earlier.text;
  return { lines, kept, provisional: lines.map((line) => line.provisional) };
}

describe('a number said across utterances', () => {
  test.each([
    ['8 + 8 digits', ['My card is 4242 4242', '4242 4242'], ['My card is [card number]', '[card number]']],
    ['4 + 12 digits', ['My card is 4242.', '4242 4242 4242.'], ['My card is [card number].', '[card number].']],
    ['12 + 4 digits', ['my card number is 4242 4242 4242', '4242, thanks'], ['my card number is [card number]', '[card number], thanks']],
    ['words', ['four two four two four two four two', 'four two four two four two four two'], ['[card number]', '[card number]']],
    ['pairs', ['forty-two forty-two forty-two forty-two', 'forty-two forty-two forty-two forty-two'], ['[card number]', '[card number]']],
    ['after a filler', ['card 4242 4242 uh', 'and 4242 4242 okay'], ['card [card number] uh', 'and [card number] okay']],
    ['after fillers', ['Meine Karte: 4242 4242, äh', 'ja, genau, 4242 4242'], ['Meine Karte: [card number], äh', 'ja, genau, [card number]']],
    ['Arabic-Indic digits', ['٤٢٤٢ ٤٢٤٢', '٤٢٤٢ ٤٢٤٢'], ['[card number]', '[card number]']],
    ['an IBAN', ['IBAN DE89 3704 0044', '0532 0130 00'], [`IBAN ${IBAN_PLACEHOLDER}`, IBAN_PLACEHOLDER]],
    ['an IBAN after its country code', ['my IBAN is D E', 'eight nine three seven zero four zero zero four four zero five three two zero one three zero zero zero'], [`my IBAN is ${IBAN_PLACEHOLDER}`, IBAN_PLACEHOLDER]],
    ['three breaths', ['4242 4242', '4242', '4242 and that is it'], ['[card number]', '[card number]', '[card number] and that is it']],
  ])('%s: every part is taken out', (_, utterances, kept) => {
    const read_ = read(...utterances);
    expect(read_.kept).toEqual(kept);
    expect(read_.kept.join(' ')).not.toMatch(/4242|two/);
  });

  test('the earlier utterance waits (heldFrom) while its end may begin a number, and is amended when it did', () => {
    const { lines } = read('My card is 4242 4242', '4242 4242', 'What else?');
    expect(lines[0]).toMatchObject({ seq: 1, text: 'My card is 4242 4242', heldFrom: 1, amended: [] });
    expect(lines[1]).toMatchObject({ seq: 2, text: CARD_PLACEHOLDER, amended: [{ seq: 1, text: `My card is ${CARD_PLACEHOLDER}` }] });
    expect(lines[2]).toMatchObject({ seq: 3, heldFrom: undefined, amended: [] });
  });

  test('where it cannot be amended, an end with more than six digits is masked at once', () => {
    expect(read('My card is 4242 4242', '4242 4242').provisional).toEqual([`My card is ${PARTIAL_PLACEHOLDER}`, CARD_PLACEHOLDER]);
    expect(read('My card is 424242', '4242 4242 4242 4242').provisional[0]).toBe('My card is 424242');
    expect(read('Since 2024', 'yes').provisional[0]).toBe('Since 2024');
  });

  test('numbers that are not continued, or whose parts make no card, stay', () => {
    expect(read('my order is 4242 4242', 'thanks, 4242 4242').kept).toEqual(['my order is 4242 4242', 'thanks, 4242 4242']);
    expect(read('order 1234 5678', '1234 5678').kept).toEqual(['order 1234 5678', '1234 5678']);
    // An end of six digits or fewer is written at once (it says nothing of a card); a longer one waits for the next breath.
    expect(read('Since 2024', 'I have been a customer').lines.map((line) => line.heldFrom)).toEqual([undefined, undefined]);
    expect(read('[keypad] 4711', 'thanks').lines.map((line) => line.heldFrom)).toEqual([undefined, undefined]);
    expect(read('card 4242 4242', 'I have been a customer').lines.map((line) => line.heldFrom)).toEqual([1, undefined]);
    expect(read('Hello there', 'look at', 'this').lines.every((line) => line.heldFrom === undefined)).toBe(true);
  });

  test('a card said whole, then its expiry date and security code in the next breath, takes them too', () => {
    expect(read('4242 4242 4242 4242', '12 25 123').kept).toEqual([CARD_PLACEHOLDER, CARD_PLACEHOLDER]);
  });

  test('a card the next utterance says whole on its own is not spread back', () => {
    expect(read('Since 2024', '4242 4242 4242 4242').kept).toEqual(['Since 2024', CARD_PLACEHOLDER]);
  });

  test('each call reads its own utterances', () => {
    const make = callerLinesOf(redactor);
    const first = make();
    const second = make();
    first.said('card 4242 4242');
    expect(second.said('4242 4242').text).toBe('4242 4242');
    expect(first.said('4242 4242').text).toBe(CARD_PLACEHOLDER);
  });

  test('a long utterance is read at its ends for what goes on across it', () => {
    const long = `${'and so on '.repeat(2000)}4242 4242`;
    const { kept } = read(long, `4242 4242 ${'la '.repeat(3000)}`);
    expect(kept[0]!.endsWith(`on ${CARD_PLACEHOLDER}`)).toBe(true);
    expect(kept[1]!.startsWith(`${CARD_PLACEHOLDER} la`)).toBe(true);
  });
});

describe('where an utterance ends', () => {
  test('a country code said last is carried without the punctuation after it', () => {
    const reader = callerLinesOf(redactor)();
    reader.said('My IBAN is D E.');
    const next = reader.said('eight nine, three seven zero four zero zero four four zero five three two zero one three zero zero zero');
    expect(next.amended).toEqual([{ seq: 1, text: `My IBAN is ${IBAN_PLACEHOLDER}.` }]);
  });
});
