/** Marks a result cut at its cap, so the model knows there was more. */
export const CUT_MARK = ' …[cut]';

/**
 * A result as the model reads it: at most `maxChars` characters, never half a
 * surrogate pair, marked when cut; `more` says the text was cut already.
 */
export function capResult(text: string, maxChars: number, more = false): string {
  if (text.length <= maxChars && !more) return text;
  let end = Math.min(text.length, Math.max(0, maxChars - CUT_MARK.length));
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}${CUT_MARK}`;
}

/** Any answer as text: strings as they are, everything else as compact JSON. */
export function resultText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value) ?? String(value);
}
