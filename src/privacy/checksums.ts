/**
 * The check digits of card numbers (Luhn) and IBANs (ISO 13616, mod 97).
 *
 * The redactor trusts these rather than the shape of a number alone: a card or
 * an IBAN always carries its check digits, so a digit run that fails them is an
 * order number, a phone number or a date, and stays in the transcript.
 */

/** Digit run lengths of the card numbers in use (ISO/IEC 7812: 8-digit IIN, at most 19 in all). */
export const CARD_MIN_DIGITS = 13;
export const CARD_MAX_DIGITS = 19;

const ZERO = 48;

/** Luhn (mod 10) check of ASCII digits; says nothing about length, so callers bound that themselves. */
export function luhnValid(digits: string): boolean {
  if (digits.length === 0) return false;
  for (let i = 0; i < digits.length; i++) {
    if (!isDigitCode(digits.charCodeAt(i))) return false;
  }
  return luhnWindow(digits, 0, digits.length, digits.length, () => true) === digits.length;
}

/**
 * Length of the first window `digits[start, start + length)`, with `minLength ≤ length ≤ maxLength` and
 * `canEnd(start + length)`, whose Luhn sum is right; 0 when there is none.
 *
 * One pass from `start` for all lengths at once: the Luhn weights count from the right end, which moves
 * with the length, so both weightings (doubling the even or the odd offsets from `start`) are summed
 * side by side and the one that leaves the last digit undoubled is read at each end. Looking for a card
 * inside a long run of digits thus costs at most `maxLength` steps per place it may start.
 */
export function luhnWindow(digits: string, start: number, minLength: number, maxLength: number, canEnd: (end: number) => boolean): number {
  let doublingEven = 0;
  let doublingOdd = 0;
  const last = Math.min(digits.length, start + maxLength);
  for (let at = start; at < last; at++) {
    const digit = digits.charCodeAt(at) - ZERO;
    const offset = at - start;
    if (offset % 2 === 0) {
      doublingEven += doubled(digit);
      doublingOdd += digit;
    } else {
      doublingEven += digit;
      doublingOdd += doubled(digit);
    }
    const length = offset + 1;
    if (length < minLength || !canEnd(at + 1)) continue;
    // The last digit (offset length - 1) is never doubled: with an odd length it is at an even offset.
    const sum = length % 2 === 1 ? doublingOdd : doublingEven;
    if (sum % 10 === 0) return length;
  }
  return 0;
}

function doubled(digit: number): number {
  return digit < 5 ? digit * 2 : digit * 2 - 9;
}

/**
 * IBAN length of every country in the SWIFT IBAN registry. Only these are taken for IBANs: the length
 * settles where a spoken IBAN ends, and a made-up country prefix with a lucky mod-97 is no account.
 * Territories bank under these codes (French overseas departments use FR, Jersey and Guernsey GB).
 */
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  Object.entries({
    AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28,
    CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18,
    FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HN: 28, HR: 21, HU: 28,
    IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20,
    LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28,
    NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24,
    SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26,
    UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
  }),
);

/** The IBAN length of the country whose code `compact` (uppercase, no spaces) starts with; undefined for none. */
export function ibanLength(compact: string): number | undefined {
  return IBAN_LENGTHS.get(compact.slice(0, 2));
}

/**
 * An IBAN with the right length for its country and right ISO 13616 check digits. Spaces and letter
 * case are forgiven, as people write IBANs in groups of four and in either case.
 */
export function ibanValid(iban: string): boolean {
  const compact = iban.replace(/ /g, '').toUpperCase();
  if (compact.length !== ibanLength(compact)) return false;
  if (!isDigitCode(compact.charCodeAt(2)) || !isDigitCode(compact.charCodeAt(3))) return false;
  return ibanRemainder(compact) === 1;
}

/**
 * ISO 7064 mod 97-10 of the IBAN read from its fifth character round to its fourth, letters as 10–35;
 * NaN when a character is not a digit or an uppercase letter. Folded digit by digit, so no big numbers.
 */
function ibanRemainder(compact: string): number {
  let remainder = 0;
  for (let i = 0; i < compact.length; i++) {
    const code = compact.charCodeAt((i + 4) % compact.length);
    if (isDigitCode(code)) remainder = (remainder * 10 + code - ZERO) % 97;
    else if (code >= 65 && code <= 90) remainder = (remainder * 100 + code - 55) % 97;
    else return Number.NaN;
  }
  return remainder;
}

function isDigitCode(code: number): boolean {
  return code >= ZERO && code <= ZERO + 9;
}
