import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { InvalidPhoneNumberError } from '../src/phone/errors.js';
import { normalizePhoneNumber } from '../src/phone/phone-number.js';

function rejection(input: string, options?: { defaultCountryCode?: string }): InvalidPhoneNumberError {
  try {
    normalizePhoneNumber(input, options);
  } catch (error) {
    if (error instanceof InvalidPhoneNumberError) return error;
    throw error;
  }
  throw new Error(`"${input}" was accepted`);
}

describe('normalizePhoneNumber accepts', () => {
  test.each([
    ['+49 151 1234567', '491511234567'],
    ['0049 151 1234567', '491511234567'],
    ['+1 (415) 555-0100', '14155550100'],
    ['491511234567', '491511234567'],
    ['  +49-151-123.45.67 ', '491511234567'],
    ['+49/151/1234567', '491511234567'],
    ['00 1 415 555 0100', '14155550100'],
    // The trunk 0 in parentheses is not dialled from abroad.
    ['+49 (0)151 1234567', '491511234567'],
    ['+49 (0) 30 1234567', '49301234567'],
    ['+49 1511 2345 67890', '491511234567890'],
    ['+1 415 5550', '14155550'],
  ])('%s → %s', (input, expected) => {
    expect(normalizePhoneNumber(input)).toBe(expected);
  });

  test('a national number only with a default country code', () => {
    expect(normalizePhoneNumber('0151 1234567', { defaultCountryCode: '49' })).toBe('491511234567');
    expect(normalizePhoneNumber('(030) 123 45 67', { defaultCountryCode: '+49' })).toBe('49301234567');
    // The default country code does not touch numbers that already have one.
    expect(normalizePhoneNumber('+1 415 555 0100', { defaultCountryCode: '49' })).toBe('14155550100');
    expect(normalizePhoneNumber('0044 20 7946 0958', { defaultCountryCode: '49' })).toBe('442079460958');
  });

  test('any way of writing an E.164 number gives back its digits, and normalising again changes nothing', () => {
    const e164 = fc.stringMatching(/^[1-9]\d{7,14}$/);
    const separators = fc.array(fc.constantFrom('', '', ' ', '-', '.', '/'), { minLength: 15, maxLength: 15 });
    fc.assert(
      fc.property(e164, separators, fc.constantFrom('+', '00', ''), (digits, seps, prefix) => {
        const written = prefix + [...digits].map((d, i) => d + (seps[i] ?? '')).join('');
        const normalised = normalizePhoneNumber(written);
        expect(normalised).toBe(digits);
        expect(normalizePhoneNumber(normalised)).toBe(digits);
      }),
    );
  });
});

describe('normalizePhoneNumber rejects', () => {
  test.each([
    ['', /empty/],
    ['   ', /empty/],
    ['call me maybe', /letters/],
    ['+49 151 1234567 ext 5', /letters/],
    ['+49#1511234567', /"#"/],
    ['+49_151_1234567', /"_"/],
    ['49+1511234567', /"\+" may only stand at the very start/],
    ['++491511234567', /"\+"/],
    ['()-', /no digits/],
    ['1234567', /7 digits.*too few/],
    ['+49 1511 2345 6789 0123', /18 digits.*more than E\.164 allows/],
    ['+0151 1234567', /no country code starts with 0/],
    ['000491511234567', /no country code starts with 0/],
  ])('%j', (input, reason) => {
    const error = rejection(input);
    expect(error.message).toMatch(reason);
    expect(error).toMatchObject({ name: 'InvalidPhoneNumberError', code: 'invalid_phone_number', status: 400, input });
  });

  test('a national number without a default country code, asking for the international format', () => {
    expect(rejection('0151 1234567').message).toMatch(/national.*use the international format, e\.g\. \+49/);
  });

  test('a national number that is too short even with the country code', () => {
    expect(rejection('0151 12', { defaultCountryCode: '49' }).message).toMatch(/too few/);
  });

  test('a default country code that is not one is a configuration error', () => {
    expect(() => normalizePhoneNumber('0151 1234567', { defaultCountryCode: '049' })).toThrow(ConfigError);
    expect(() => normalizePhoneNumber('0151 1234567', { defaultCountryCode: 'DE' })).toThrow(/country calling code/);
  });
});
