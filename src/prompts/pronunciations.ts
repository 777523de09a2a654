/**
 * `<PROMPTS_DIR>/pronunciations.yaml`: how the business's own names are said.
 * Every line Hotline speaks — a prompt file's line and each sentence the model
 * streams alike — passes through it just before its speak is built.
 *
 *   # word or phrase → how it is said
 *   sipgate: sip gate                       # a respelling: said as written here
 *   Müller-Lüdenscheidt: Müller Lüdenscheid
 *   Nguyen: { say: Nwin, ipa: "ŋwiən" }     # ipa where the voice reads SSML, `say` where it does not
 *   /\bGmbH\b/: G m b H                      # a regular expression between slashes (/…/i: flags after the last slash)
 *
 * Keys:
 * - A word or phrase matches whole words only (not inside a longer word:
 *   "Müller" is not found in "Müllerin", but "sipgate's" holds "sipgate"),
 *   whatever its case. A space in a phrase matches any run of spaces, an
 *   apostrophe either ' or ’.
 * - A key between slashes is a regular expression, matched as written
 *   (case-sensitive unless /…/i; the flags i, m and s may follow the last
 *   slash). Write it unquoted or in 'single quotes': in "double quotes" YAML
 *   reads \b as a backspace.
 * Values:
 * - A string: the respelling, said instead of the word. It is said, not shown:
 *   nothing of the original's casing is kept; `<` and `>` are left out.
 * - `{ say, ipa, alphabet }`, at least one of say and ipa: a voice that reads
 *   SSML is given `<phoneme alphabet="ipa" ph="…">` (alphabet: ipa, the
 *   default, or x-sampa); plain text gets `say`, or the word unchanged when
 *   there is only ipa.
 * Where two keys overlap, the longer match wins (at the same length, the one
 * that starts first, then the one written first); the shorter is then not
 * said, even where a shorter key of its own would fit beside the winner.
 * Everything is found in the sentence as it was: a respelling is never looked
 * at again.
 *
 * On the speak path: a pronouncer of size 0 is skipped; otherwise `text()` for
 * a speak's plain `text`, `ssml()` for each piece of an SSML document (a `sub`
 * or `phoneme` around the word). Both scan a sentence once with one combined
 * expression per set of flags (plain keys and /…/i share one), a microsecond
 * or two for a sentence and a few dozen entries.
 *
 * A broken entry is left out with an error naming its line, the others still
 * apply; a file that is not YAML at all applies nothing. A language folder's
 * file adds to the default folder's and overrides its same keys
 * (layerPronunciations). The file is read and checked by pronunciations-file.ts.
 */
import type { PromptProblem } from './prompt-problem.js';

export const PRONUNCIATIONS_FILE = 'pronunciations.yaml';

/** As PromptProblem: the message opens with "line N: ". */
export type PronunciationProblem = PromptProblem;

export interface Pronouncer {
  /** How many entries; 0: nothing to apply, callers skip it entirely. */
  readonly size: number;
  /** Plain text for a speak's `text`: each match replaced by its respelling (`say`, or the string). An entry with only ipa leaves plain text unchanged. */
  text(sentence: string): string;
  /**
   * A piece bound for an SSML document: matches in text outside tags wrapped
   * as `<sub alias="…">word</sub>` (a respelling) or `<phoneme alphabet="ipa"
   * ph="…">word</phoneme>` (ipa). Never touches a tag or its attributes, nor
   * the text inside an existing `<sub>`, `<phoneme>` or `<say-as>`.
   */
  ssml(piece: string): string;
}

export interface PronunciationsParse {
  readonly pronouncer: Pronouncer;
  readonly problems: PronunciationProblem[];
}

export interface PronunciationsRead extends PronunciationsParse {
  /** The file as read; undefined when there is none, or it cannot be read. */
  readonly text: string | undefined;
}

export type Alphabet = 'ipa' | 'x-sampa';

export interface Entry {
  /** As written in the file, for messages. */
  readonly key: string;
  /** Equal for two keys that find the same: a word lower-cased with its spaces collapsed, a regular expression as written. */
  readonly id: string;
  /** The pattern that finds it, boundaries included; its flags (of i, m, s) apart. */
  readonly pattern: string;
  readonly flags: string;
  readonly isRegex: boolean;
  /** Capture groups of `pattern`. */
  readonly groups: number;
  readonly say: string | undefined;
  /** The SSML that goes around the word: a phoneme when there is ipa, else a sub. */
  readonly open: string;
  readonly close: string;
}

// ---------------------------------------------------------------------------------------------
// Matching

/** One alternative of a combined expression. */
interface Alternative {
  readonly entry: Entry;
  /** Its place in the pronouncer's list: the earlier wins a tie. */
  readonly rank: number;
  /** The capture group around it in the combined expression. */
  readonly group: number;
  /** A regular expression alone (sticky): asked at a match's place whether it finds a longer one. */
  readonly sticky: RegExp | undefined;
}

/** One combined expression over the entries that share its flags. */
interface Scan {
  readonly regex: RegExp;
  readonly alternatives: readonly Alternative[];
  readonly regexAlternatives: readonly Alternative[];
}

interface Hit {
  readonly start: number;
  readonly end: number;
  readonly entry: Entry;
  readonly rank: number;
}

/** Letters, marks and digits: what a word is made of, in any script. */

/** As ssml.ts's: a tag with its attributes. (The prompts sit below the call's speech and cannot import it.) */
const TAG = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+\s*=\s*(?:"[^"<>]*"|'[^'<>]*'))*)\s*(\/?)>/gu;
/** Elements whose words already say how they are said. */
const KEEP_INSIDE = new Set(['sub', 'phoneme', 'say-as']);

function compile(entries: readonly Entry[]): readonly Scan[] {
  const byFlags = new Map<string, Alternative[]>();
  entries.forEach((entry, rank) => {
    const list = byFlags.get(entry.flags) ?? [];
    list.push({ entry, rank, group: 0, sticky: undefined });
    byFlags.set(entry.flags, list);
  });
  const scans: Scan[] = [];
  for (const [flags, list] of byFlags) {
    // At one place the first alternative that matches is taken: the longest words first; regular
    // expressions after them, each then asked alone whether it finds more.
    const plain = list.filter((a) => !a.entry.isRegex).sort((a, b) => b.entry.key.length - a.entry.key.length || a.rank - b.rank);
    const regexes = list.filter((a) => a.entry.isRegex);
    try {
      scans.push(combine([...plain, ...regexes], flags));
    } catch {
      // Each entry compiled alone when it was read; should their combination not, each is scanned alone.
      for (const alternative of [...plain, ...regexes]) scans.push(combine([alternative], flags));
    }
  }
  return scans;
}

function combine(list: readonly Alternative[], flags: string): Scan {
  let group = 1;
  const sources: string[] = [];
  const alternatives = list.map((a, index): Alternative => {
    const source = a.entry.isRegex ? rebase(a.entry.pattern, group, `p${index}_`) : a.entry.pattern;
    sources.push(`(${source})`);
    const placed: Alternative = {
      ...a,
      group,
      sticky: a.entry.isRegex && list.length > 1 ? new RegExp(a.entry.pattern, `${flags}uy`) : undefined,
    };
    group += 1 + a.entry.groups;
    return placed;
  });
  return {
    regex: new RegExp(sources.join('|'), `${flags}gu`),
    alternatives,
    regexAlternatives: alternatives.filter((a) => a.sticky !== undefined),
  };
}

/**
 * A regular expression's source as one alternative among others: its numbered
 * back-references moved past the groups before it, its group names made its own.
 */
function rebase(source: string, offset: number, prefix: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === '\\') {
      const next = source[i + 1] ?? '';
      if (!inClass && next >= '1' && next <= '9') {
        let j = i + 1;
        while (j < source.length && source[j]! >= '0' && source[j]! <= '9') j++;
        out += `\\${Number(source.slice(i + 1, j)) + offset}`;
        i = j - 1;
      } else if (!inClass && next === 'k' && source[i + 2] === '<') {
        out += `\\k<${prefix}`;
        i += 2;
      } else {
        out += ch + next;
        i++;
      }
    } else if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
    } else if (ch === '[') {
      inClass = true;
      out += ch;
    } else if (ch === '(' && source.startsWith('?<', i + 1) && source[i + 3] !== '=' && source[i + 3] !== '!') {
      out += `(?<${prefix}`;
      i += 2;
    } else {
      out += ch;
    }
  }
  return out;
}

/** Every place a key matches, the longest at each place, overlapping ones included. */
function findHits(text: string, scans: readonly Scan[]): Hit[] {
  const hits: Hit[] = [];
  for (const scan of scans) {
    const { regex } = scan;
    regex.lastIndex = 0;
    for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
      const start = match.index;
      let end = start + match[0].length;
      let found = scan.alternatives.find((a) => match[a.group] !== undefined)!;
      for (const other of scan.regexAlternatives) {
        if (other === found) continue;
        other.sticky!.lastIndex = start;
        const longer = other.sticky!.exec(text);
        if (longer !== null && start + longer[0].length > end) {
          end = start + longer[0].length;
          found = other;
        }
      }
      if (end > start) hits.push({ start, end, entry: found.entry, rank: found.rank });
      // On from the next character, not the match's end: a longer key may start inside this one.
      regex.lastIndex = start + ((text.codePointAt(start) ?? 0) > 0xffff ? 2 : 1);
    }
  }
  return hits;
}

/** The hits that apply: where two overlap, the longer (then the earlier, then the one written first); in text order. */
function choose(hits: Hit[]): Hit[] {
  if (hits.length < 2) return hits;
  hits.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start || a.rank - b.rank);
  const chosen: Hit[] = [];
  for (const hit of hits) {
    if (chosen.every((c) => c.end <= hit.start || hit.end <= c.start)) chosen.push(hit);
  }
  return chosen.sort((a, b) => a.start - b.start);
}

function rewrite(text: string, hits: readonly Hit[], replace: (hit: Hit, word: string) => string): string {
  let out = '';
  let last = 0;
  for (const hit of hits) {
    out += text.slice(last, hit.start) + replace(hit, text.slice(hit.start, hit.end));
    last = hit.end;
  }
  return out + text.slice(last);
}

/** The stretches of a piece that are text outside every tag and outside the elements that already say how they are said. */
function textRanges(piece: string): [number, number][] {
  const ranges: [number, number][] = [];
  let last = 0;
  let kept = 0;
  for (const match of piece.matchAll(TAG)) {
    const [tag, closing, name = '', , selfClosing] = match;
    if (kept === 0 && match.index > last) ranges.push([last, match.index]);
    last = match.index + tag.length;
    const lower = name.toLowerCase();
    if (!KEEP_INSIDE.has(lower) || selfClosing) continue;
    if (!closing) kept++;
    else if (kept > 0) kept--;
  }
  if (kept === 0 && piece.length > last) ranges.push([last, piece.length]);
  return ranges;
}

export class EntryPronouncer implements Pronouncer {
  readonly size: number;
  readonly #said: readonly Scan[];
  readonly #all: readonly Scan[];

  constructor(readonly entries: readonly Entry[]) {
    this.size = entries.length;
    this.#all = compile(entries);
    const said = entries.filter((e) => e.say !== undefined);
    this.#said = said.length === entries.length ? this.#all : compile(said);
  }

  text(sentence: string): string {
    if (this.#said.length === 0) return sentence;
    const hits = findHits(sentence, this.#said);
    if (hits.length === 0) return sentence;
    return rewrite(sentence, choose(hits), (hit) => hit.entry.say!);
  }

  ssml(piece: string): string {
    if (this.#all.length === 0) return piece;
    let hits = findHits(piece, this.#all);
    if (hits.length === 0) return piece;
    if (piece.includes('<')) {
      const ranges = textRanges(piece);
      hits = hits.filter((h) => ranges.some(([start, end]) => start <= h.start && h.end <= end));
    }
    return rewrite(piece, choose(hits), (hit, word) => `${hit.entry.open}${word}${hit.entry.close}`);
  }
}

export const NO_PRONUNCIATIONS: Pronouncer = new EntryPronouncer([]);

/** A language folder's pronouncer over the default folder's: `own` adds entries and overrides `base`'s same keys. */
export function layerPronunciations(base: Pronouncer, own: Pronouncer): Pronouncer {
  if (!(base instanceof EntryPronouncer) || !(own instanceof EntryPronouncer)) {
    throw new TypeError('layerPronunciations takes the pronouncers parsePronunciations and readPronunciations make');
  }
  if (own.size === 0) return base;
  if (base.size === 0) return own;
  const overridden = new Set(own.entries.map((e) => e.id));
  return new EntryPronouncer([...own.entries, ...base.entries.filter((e) => !overridden.has(e.id))]);
}
