/** LLM-like tokenization for the scripted server's streams. */

// ---------------------------------------------------------------------------------------------

// Order matters: contractions before words so "don't" gives "don" + "'t"; the whitespace rule
// leaves the last space of a run to the word that follows, like GPT-style pre-tokenizers.
const TOKEN_PATTERN =
  /['’](?:s|t|re|ve|m|ll|d)(?!\p{L})| ?\p{L}[\p{L}\p{M}]*| ?\p{N}{1,3}| ?(?:\.\.\.|[^\s\p{L}\p{N}])|[\r\n]+|[^\S\r\n]+(?!\S)|[^\S\r\n]+|[\s\S]/giu;
const LONG_WORD = 10;
const WORD_PIECE = 6;

/**
 * Splits text into LLM-like pieces: words carry their leading space, long words break into
 * sub-word pieces, numbers into groups of up to three digits, punctuation and newlines stand alone.
 * Joining the pieces gives back the text exactly.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(TOKEN_PATTERN)) {
    const piece = match[0];
    const codePoints = piece.length > LONG_WORD && /\p{L}/u.test(piece) ? Array.from(piece) : undefined;
    if (codePoints === undefined || codePoints.length <= LONG_WORD) {
      out.push(piece);
      continue;
    }
    // Real tokenizers rarely keep long words whole; splitting them exercises consumers that must
    // cope with a word arriving in parts.
    let start = 0;
    while (start < codePoints.length) {
      let end = start + WORD_PIECE + (start === 0 && codePoints[0] === ' ' ? 1 : 0);
      if (codePoints.length - end < 3) end = codePoints.length;
      out.push(codePoints.slice(start, end).join(''));
      start = end;
    }
  }
  return out;
}
