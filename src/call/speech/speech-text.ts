import { hasSsml, isSsmlName, stripSsml } from './ssml.js';

/** Tags that separate words, so removing them must leave a space. */
const BLOCK_TAGS = /^(?:br|p|div|li|ul|ol|tr|td|th|table|hr|h[1-6])$/u;

const IMAGE_OR_LINK = /!?\[([^\]]*)\]\([^()\s]*(?:\s+"[^"]*")?\)/gu;
/** Citation markers of search-backed models (Perplexity): `[1]`, `[2][5]`, `[1, 3]`, footnotes `[^4]`. */
const CITATION = /\s*\[\^?\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\]/gu;
const AUTOLINK = /<((?:https?|mailto):[^\s<>]+)>/gu;
const TAG = /<\/?([A-Za-z][\w:-]*)(?:\s[^<>]*)?\/?>/gu;
const CODE_FENCE = /^`{3,}[^`\s]*$/u;
const BACKTICKS = /`+/gu;
const STRIKE = /~~(?=\S)(.+?)(?<=\S)~~/gu;
const EMPHASIS_RUN = /\*+|_+/gu;
const LINE_PREFIX = /^(?:>\s*|#{1,6}(?=\s|$)|[-*+•]\s+)/u;
const CLOSING_HASHES = /\s+#+$/u;
const PIPES = /\|/gu;
/**
 * A pictograph, regional indicator or stray modifier, with the joiners,
 * variation selectors, skin tones, keycaps and tag characters that belong
 * to it — and the spaces around it, which the replacement decides about.
 */
const EMOJI =
  /\s*(?:[\p{Extended_Pictographic}\p{Regional_Indicator}\uFE0E\uFE0F\u20E3\u{1F3FB}-\u{1F3FF}\u{E0020}-\u{E007F}])(?:[\p{Extended_Pictographic}\p{Regional_Indicator}\uFE0E\uFE0F\u200D\u20E3\u{1F3FB}-\u{1F3FF}\u{E0020}-\u{E007F}])*\s*/gu;
const HUGS_PUNCTUATION_AFTER = /^[.,!?;:…)\]}"”’»]/u;
const HUGS_PUNCTUATION_BEFORE = /[(\[{"“‘«„]$/u;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const SPACES = /\s+/gu;
/**
 * A character one of the rules below acts on, wherever it stands: brackets (links, citations), angle
 * brackets (tags, autolinks, quotes), markdown marks, pipes, and the first character of an emoji. A
 * chunk without any, and without a `- ` or `+ ` bullet in front, is left as it is by every rule but the
 * folding of whitespace: most sentences are such, and they go out without a dozen passes over them.
 */
const MARKUP = /[[\]<>#*_~`|•]|[\p{Extended_Pictographic}\p{Regional_Indicator}\uFE0E\uFE0F\u20E3\u{1F3FB}-\u{1F3FF}\u{E0020}-\u{E007F}]/u;
const BULLET = /^[-+]\s/u;

/**
 * Strips markdown and emoji from a chunk and normalises whitespace; returns ''
 * when nothing speakable is left. SSML tags go too, unless `keepSsml` (the
 * chunk is bound for a speak's `ssml`).
 */
export function toSpeech(chunk: string, keepSsml = false): string {
  let text = chunk.trim();
  if (!MARKUP.test(text) && !BULLET.test(text)) {
    text = text.replace(SPACES, ' ');
    return LETTER_OR_DIGIT.test(text) ? text : '';
  }
  if (CODE_FENCE.test(text)) return '';
  if (!keepSsml && hasSsml(text)) text = stripSsml(text);
  text = text.replace(IMAGE_OR_LINK, '$1').replace(CITATION, '').replace(AUTOLINK, '$1').replace(TAG, stripTag);
  text = text.replace(EMOJI, dropEmoji);
  text = stripLinePrefixes(text.trim()).replace(CLOSING_HASHES, '');
  text = text.replace(BACKTICKS, '').replace(STRIKE, '$1').replace(EMPHASIS_RUN, stripEmphasis);
  text = text.replace(PIPES, ' ').replace(SPACES, ' ').trim();
  return LETTER_OR_DIGIT.test(text) ? text : '';
}

function stripTag(tag: string, name: string): string {
  const lower = name.toLowerCase();
  if (isSsmlName(lower)) return tag;
  return BLOCK_TAGS.test(lower) ? ' ' : '';
}

/** Leaves a space only where the emoji stood between two words, so no space lands before punctuation. */
function dropEmoji(match: string, offset: number, whole: string): string {
  const before = whole.slice(0, offset);
  const after = whole.slice(offset + match.length);
  if (before === '' || after === '') return '';
  if (HUGS_PUNCTUATION_AFTER.test(after) || HUGS_PUNCTUATION_BEFORE.test(before)) return '';
  return ' ';
}

/** Blockquote, heading and bullet markers may be stacked: "> - ## Title". */
function stripLinePrefixes(text: string): string {
  let rest = text;
  for (let prev = ''; prev !== rest; ) {
    prev = rest;
    rest = rest.replace(LINE_PREFIX, '').trimStart();
  }
  return rest;
}

/**
 * A run of `*` or `_` is emphasis unless it sits between two spaces (`x * 2`)
 * or inside a word (`snake_case`, `2*3`).
 */
function stripEmphasis(run: string, offset: number, whole: string): string {
  const before = whole.charAt(offset - 1);
  const after = whole.charAt(offset + run.length);
  const blank = (c: string): boolean => c === '' || /\s/u.test(c);
  if (blank(before) && blank(after)) return run;
  if (LETTER_OR_DIGIT.test(before) && LETTER_OR_DIGIT.test(after)) return run;
  return '';
}
