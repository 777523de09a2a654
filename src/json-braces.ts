/**
 * Where a JSON object written inside free text ends: a model's answer may wrap its object in prose
 * or markdown, and braces inside the object's strings do not count.
 */

/** The index of the brace that closes the one opened at `start`; -1 if it never closes. */
export function closingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}
