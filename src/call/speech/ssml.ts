/**
 * SSML from the model or a prompt file. The production service takes it in a
 * speak's `ssml` field, as a document with a `<speak>` root; in `text` the
 * tags would be read out or dropped at the service's whim. Hotline sends a
 * well-formed document for each speak, or plain text when SSML is off.
 */

/** Tags of the SSML the service's TTS voices (Azure, ElevenLabs) understand; `speak` is the root Hotline adds itself. */
const SSML_TAGS = new Set(['break', 'say-as', 'emphasis', 'prosody', 'sub', 'phoneme', 'p', 's', 'lang', 'mark', 'spell', 'voice', 'speak']);
/** Vendor extensions, e.g. Azure's `<mstts:express-as>`. */
const VENDOR_TAG = /^(?:mstts|amazon|google):[\w-]+$/u;

const TAG = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+\s*=\s*(?:"[^"<>]*"|'[^'<>]*'))*)\s*(\/?)>/gu;

export function isSsmlName(name: string): boolean {
  const lower = name.toLowerCase();
  return SSML_TAGS.has(lower) || VENDOR_TAG.test(lower);
}

/** True if `text` holds at least one SSML tag. */
export function hasSsml(text: string): boolean {
  for (const match of text.matchAll(TAG)) if (isSsmlName(match[2]!)) return true;
  return false;
}

/**
 * The words of SSML as plain text: tags go (a break leaves a space), `<sub
 * alias="…">` speaks its alias, entities are decoded.
 */
export function stripSsml(text: string): string {
  let out = '';
  let last = 0;
  let aliasUntil: string | undefined;
  for (const match of text.matchAll(TAG)) {
    const [tag, closing, name = '', attributes = ''] = match;
    if (!isSsmlName(name)) continue;
    if (aliasUntil === undefined) out += text.slice(last, match.index);
    last = match.index + tag.length;
    const lower = name.toLowerCase();
    if (lower === 'sub' && !closing) {
      const alias = /\balias\s*=\s*(?:"([^"]*)"|'([^']*)')/u.exec(attributes);
      if (alias && !tag.endsWith('/>')) {
        out += alias[1] ?? alias[2] ?? '';
        aliasUntil = 'sub';
      }
    } else if (lower === 'sub' && closing && aliasUntil === 'sub') {
      aliasUntil = undefined;
    } else if (lower === 'break' || lower === 'p' || lower === 's') {
      out += ' ';
    }
  }
  if (aliasUntil === undefined) out += text.slice(last);
  return decodeEntities(out).replace(/\s+/gu, ' ').trim();
}

/**
 * One speak's SSML document: the pieces (sentences) joined, text escaped,
 * tags the model left open closed and stray closing tags dropped — each speak
 * stands alone, so a sentence can never leave the next one half-tagged.
 */
export function ssmlDocument(pieces: readonly string[]): string {
  const open: string[] = [];
  let body = '';
  for (const piece of pieces) {
    if (body !== '') body += ' ';
    let last = 0;
    for (const match of piece.matchAll(TAG)) {
      const [tag, closing, name = '', , selfClosing] = match;
      if (!isSsmlName(name)) continue;
      body += escapeText(piece.slice(last, match.index));
      last = match.index + tag.length;
      const lower = name.toLowerCase();
      // The root is Hotline's to write.
      if (lower === 'speak') continue;
      if (selfClosing) body += tag;
      else if (!closing) {
        open.push(lower);
        body += tag;
      } else if (open.includes(lower)) {
        while (open.length > 0) {
          const top = open.pop()!;
          body += `</${top}>`;
          if (top === lower) break;
        }
      }
    }
    body += escapeText(piece.slice(last));
  }
  while (open.length > 0) body += `</${open.pop()!}>`;
  return `<speak>${body.trim()}</speak>`;
}

/** Text between tags: `&` and `<` are markup in XML unless already an entity. */
function escapeText(text: string): string {
  return text.replace(/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/giu, '&amp;').replace(/</gu, '&lt;');
}

function decodeEntities(text: string): string {
  return text
    .replace(/&lt;/gu, '<')
    .replace(/&gt;/gu, '>')
    .replace(/&quot;/gu, '"')
    .replace(/&apos;/gu, "'")
    .replace(/&#(\d+);/gu, (_m, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/giu, (_m, code: string) => String.fromCodePoint(Number.parseInt(code, 16)))
    .replace(/&amp;/gu, '&');
}
