import { DocumentError } from './passage.js';

const NEWLINE = 0x0a;

/**
 * A text document's bytes as text: UTF-8 without its byte order mark, every
 * line ending as "\n" so lines count the same whoever saved the file. Bytes
 * that are not UTF-8 (a file saved as Latin-1 or UTF-16) are refused with the
 * line to look at, rather than read as words that are not there.
 */
export function decodeText(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/\r\n?/g, '\n');
  } catch {
    const line = firstBadLine(bytes);
    throw new DocumentError('not UTF-8 text: save the file as UTF-8', line);
  }
}

/** A newline byte is never part of a longer UTF-8 character, so each line can be tried on its own. */
function firstBadLine(bytes: Uint8Array): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 1;
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end === -1) end = bytes.length;
    try {
      decoder.decode(bytes.subarray(start, end));
    } catch {
      return line;
    }
    line++;
    start = end + 1;
  }
  return line;
}
