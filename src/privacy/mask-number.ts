/**
 * A phone number as it may be shown or logged where it is not needed whole: its first four and last
 * two digits, enough to tell calls apart and to recognise one's own, not enough to call anyone.
 */
export function maskNumber(number: string): string {
  const digits = number.replace(/\D/g, '');
  if (digits.length <= 5) return '•'.repeat(digits.length);
  return `${digits.slice(0, 4)}${'•'.repeat(digits.length - 6)}${digits.slice(-2)}`;
}

/** The same for a number that may be missing: logs say so rather than print nothing. */
export function maskedOrNone(number: string | null | undefined): string | undefined {
  return number ? maskNumber(number) : undefined;
}
