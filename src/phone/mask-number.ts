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

/**
 * What a number filter matches where numbers are shown masked: a number typed whole is masked as
 * the page masks it; one typed as shown (4915•••••••78, or with * or x for a hidden digit) is taken
 * as it is. Only the masked form is ever compared, so nothing the mask hides can decide a match, nor
 * a count: a part of a number would let someone who sees it masked rebuild it a digit at a time.
 * Undefined when what was typed is neither a number nor one masked.
 */
export function maskedQuery(typed: string): string | undefined {
  const kept = typed.replace(/[•*xX]/g, '•').replace(/[^\d•]/g, '');
  if (!kept.includes('•')) return kept === '' ? undefined : maskNumber(kept);
  return /^(?:\d{4}•+\d{2}|•{1,5})$/.test(kept) ? kept : undefined;
}
