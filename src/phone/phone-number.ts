import { ConfigError } from '../errors.js';
import { InvalidPhoneNumberError } from './errors.js';

const MIN_DIGITS = 8;
const MAX_DIGITS = 15; // E.164's limit, country code included

/**
 * Turns a number as people write it into what the voice service expects:
 * E.164 digits without '+' (`+49 151 1234567` → `491511234567`).
 *
 * International forms (`+…`, `00…`, or already bare E.164 digits) are always
 * accepted. A national form with a single leading 0 (`0151 1234567`) needs
 * `defaultCountryCode` (DEFAULT_COUNTRY_CODE), since without it the country cannot be known.
 */
export function normalizePhoneNumber(input: string, options: { defaultCountryCode?: string | undefined } = {}): string {
  function fail(reason: string): never {
    throw new InvalidPhoneNumberError(input, reason);
  }
  const text = input.trim();
  if (text === '') fail('it is empty');

  const letters = text.match(/\p{L}/gu);
  if (letters) fail(`it contains letters (${[...new Set(letters)].join('')}); only digits, a leading + and spaces - . / ( ) are allowed`);
  const stray = text.match(/[^\d\s\-./()+]/u);
  if (stray) fail(`it contains "${stray[0]}"; only digits, a leading + and spaces - . / ( ) are allowed`);
  if (text.lastIndexOf('+') > 0) fail('"+" may only stand at the very start');

  const plus = text.startsWith('+');
  // "+49 (0)151 …" marks the trunk 0 that is dialled only nationally; keeping it would call a wrong number.
  const withoutTrunkZero = text.replace(/(\d)[\s\-./]*\(\s*0\s*\)/u, '$1');
  const digits = withoutTrunkZero.replace(/\D/g, '');
  if (digits === '') fail('it contains no digits');

  let e164: string;
  if (plus) {
    e164 = digits;
  } else if (digits.startsWith('00')) {
    e164 = digits.slice(2);
  } else if (digits.startsWith('0')) {
    const countryCode = parseCountryCode(options.defaultCountryCode);
    if (countryCode === undefined) {
      // Every default comes from DEFAULT_COUNTRY_CODE: the message names it, wherever the number was given.
      fail('it is in national form (leading 0) and DEFAULT_COUNTRY_CODE is not set: set DEFAULT_COUNTRY_CODE (e.g. 49 for Germany), or use the international format, e.g. +49 151 1234567');
    }
    e164 = `${countryCode}${digits.slice(1)}`;
  } else {
    e164 = digits;
  }

  if (e164.startsWith('0')) fail('no country code starts with 0; use the international format, e.g. +49 151 1234567');
  if (e164.length < MIN_DIGITS) fail(`it has ${e164.length} digits with country code, too few for a phone number (at least ${MIN_DIGITS})`);
  if (e164.length > MAX_DIGITS) fail(`it has ${e164.length} digits with country code, more than E.164 allows (${MAX_DIGITS})`);
  return e164;
}

function parseCountryCode(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const code = value.trim().replace(/^(\+|00)/, '');
  if (!/^[1-9]\d{0,2}$/.test(code)) {
    throw new ConfigError(`Default country code "${value}" is not a country calling code such as 49 or 1`);
  }
  return code;
}

/**
 * A number Hotline did not write itself (the service's `to_phone_number`, a row stored before
 * numbers were normalised) as numbers are compared: normalised where it can be, else its digits.
 * A number that cannot be dialled can still be one that must not be.
 */
export function phoneKey(input: string, options: { defaultCountryCode?: string | undefined } = {}): string {
  try {
    return normalizePhoneNumber(input, options);
  } catch (error) {
    if (error instanceof InvalidPhoneNumberError) return input.replace(/\D/g, '');
    throw error;
  }
}
