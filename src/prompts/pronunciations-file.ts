/**
 * Reading prompts/pronunciations.yaml (and a language folder's): every entry checked, each problem
 * with its line; a broken entry is left out and the others apply. What an entry does to a sentence
 * is pronunciations.ts's.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { describe, errorCode } from './prompt-problem.js';
import {
  EntryPronouncer,
  NO_PRONUNCIATIONS,
  PRONUNCIATIONS_FILE,
  type Alphabet,
  type Entry,
  type PronunciationProblem,
  type PronunciationsParse,
  type PronunciationsRead,
} from './pronunciations.js';

/** A plain key matches whole words: not inside a longer one, letters, marks and digits of any script. */
const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u;
const NOT_AFTER_WORD = '(?<![\\p{L}\\p{M}\\p{N}])';
const NOT_BEFORE_WORD = '(?![\\p{L}\\p{M}\\p{N}])';

/** `<dir>/pronunciations.yaml`; none there is no problem: nothing is applied. `file` names it in the problems. */
export async function readPronunciations(dir: string, file: string = PRONUNCIATIONS_FILE): Promise<PronunciationsRead> {
  let text: string;
  try {
    text = (await readFile(path.join(dir, PRONUNCIATIONS_FILE), 'utf8')).replace(/^\uFEFF/u, '');
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { pronouncer: NO_PRONUNCIATIONS, problems: [], text: undefined };
    return {
      pronouncer: NO_PRONUNCIATIONS,
      problems: [{ file, severity: 'error', message: `cannot be read: ${describe(error)}` }],
      text: undefined,
    };
  }
  return { ...parsePronunciations(text, file), text };
}

const FIELDS = ['say', 'ipa', 'alphabet'];
const CONTROL = /[\0-\x08\x0b\x0c\x0e-\x1f\x7f]/u;
const CONTROL_ALL = new RegExp(CONTROL.source, 'gu');
const KNOWN_FLAGS = 'ims';
const FORMS = 'a respelling, or { say: …, ipa: … }';

export function parsePronunciations(text: string, file: string): PronunciationsParse {
  const problems: PronunciationProblem[] = [];
  const report = (severity: PronunciationProblem['severity'], line: number, message: string): void => {
    problems.push({ file, severity, message: `line ${line}: ${message}` });
  };
  const lineCounter = new LineCounter();
  // Every scalar a string (`4711:`, `yes:` are words here), and the same key twice a warning, not a failure.
  const doc = parseDocument(text, { schema: 'failsafe', uniqueKeys: false, lineCounter, prettyErrors: false });
  const lineAt = (offset: number | undefined): number => (offset === undefined ? 1 : lineCounter.linePos(offset).line || 1);
  const lineOf: LineOf = (node, fallback) => {
    const offset = isNode(node) ? node.range?.[0] : undefined;
    return offset === undefined ? fallback : lineAt(offset);
  };
  if (doc.errors.length > 0) {
    for (const error of doc.errors) report('error', lineAt(error.pos[0]), `not valid YAML: ${error.message.split('\n')[0] ?? error.message}`);
    return { pronouncer: NO_PRONUNCIATIONS, problems };
  }
  const contents = doc.contents;
  if (contents === null || (isScalar(contents) && contents.value === '')) return { pronouncer: NO_PRONUNCIATIONS, problems };
  if (!isMap(contents)) {
    report('error', lineAt(contents.range?.[0]), 'the file must be lines of "word: how it is said"');
    return { pronouncer: NO_PRONUNCIATIONS, problems };
  }

  const entries = new Map<string, Entry>();
  const lines = new Map<string, number>();
  for (const pair of contents.items) {
    const keyNode = resolve(doc, pair.key);
    const line = lineOf(pair.key, lineOf(pair.value, 1));
    if (!isScalar(keyNode) || typeof keyNode.value !== 'string') {
      report('error', line, 'a key must be a word, a phrase or a /regular expression/');
      continue;
    }
    const key = keyNode.value.trim().normalize('NFC');
    if (key === '') {
      report('error', line, 'the key is empty: write the word or phrase before the colon');
      continue;
    }
    if (CONTROL.test(key)) {
      // "\bGmbH\b" in double quotes: YAML's escapes, not the expression's.
      const written = key.replace(CONTROL_ALL, (ch) => (ch === '\b' ? '\\b' : `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`));
      report('error', line, `"${written}" holds a control character, as YAML makes of \\b in "double quotes": write the key unquoted or in 'single quotes'`);
      continue;
    }
    const match = readKey(key);
    if ('error' in match) {
      report('error', line, match.error);
    }
    const id = 'error' in match ? key : match.id;
    const earlier = lines.get(id);
    if (earlier !== undefined) report('warning', line, `"${key}" is already on line ${earlier}; the later one is used`);
    lines.set(id, line);
    const value = readValue(doc, key, line, pair.value, report, lineOf);
    if ('error' in match || value === undefined) continue;
    entries.set(id, { key, ...match, ...value });
  }
  return { pronouncer: entries.size === 0 ? NO_PRONUNCIATIONS : new EntryPronouncer([...entries.values()]), problems };
}

type KeyMatch = Pick<Entry, 'id' | 'pattern' | 'flags' | 'isRegex' | 'groups'>;

function readKey(key: string): KeyMatch | { error: string } {
  const slash = key.lastIndexOf('/');
  if (key.startsWith('/') && slash > 0) return readRegexKey(key, key.slice(1, slash), key.slice(slash + 1));
  const words = key.split(/\s+/u).map((word) => word.replace(/[\\^$.*+?()[\]{}|/]/gu, '\\$&').replace(/['’]/gu, "['’]"));
  const chars = [...key];
  const pattern = (WORD_CHAR.test(chars[0]!) ? NOT_AFTER_WORD : '') + words.join('\\s+') + (WORD_CHAR.test(chars.at(-1)!) ? NOT_BEFORE_WORD : '');
  return { id: key.toLowerCase().replace(/\s+/gu, ' ').replace(/’/gu, "'"), pattern, flags: 'i', isRegex: false, groups: 0 };
}

function readRegexKey(key: string, source: string, flagText: string): KeyMatch | { error: string } {
  const unknown = [...flagText].filter((flag) => !`${KNOWN_FLAGS}gu`.includes(flag));
  if (unknown.length > 0) {
    return { error: `"${key}": unknown flag${unknown.length > 1 ? 's' : ''} "${unknown.join('')}" after the last slash (known: i, m, s)` };
  }
  const flags = [...KNOWN_FLAGS].filter((flag) => flagText.includes(flag)).join('');
  let regex: RegExp;
  try {
    regex = new RegExp(source, `${flags}u`);
  } catch (error) {
    const reason = describe(error).replace(/^Invalid regular expression: \/.*\/[a-z]*: /su, '');
    return { error: `"${key}" is not a valid regular expression: ${reason}` };
  }
  if (regex.exec('') !== null) return { error: `"${key}" matches an empty text, so it would match everywhere` };
  const groups = new RegExp(`${source}|`, `${flags}u`).exec('')!.length - 1;
  return { id: key, pattern: source, flags, isRegex: true, groups };
}

type Report = (severity: PronunciationProblem['severity'], line: number, message: string) => void;
/** The line of a node, or of `fallback`'s when the node has no place of its own. */
type LineOf = (node: unknown, fallback: number) => number;

/** What a key's value says, or undefined when it says nothing usable (then reported). */
function readValue(
  doc: Document,
  key: string,
  keyLine: number,
  node: unknown,
  report: Report,
  lineOf: LineOf,
): Pick<Entry, 'say' | 'open' | 'close'> | undefined {
  const value = resolve(doc, node);
  if (isScalar(value) && typeof value.value === 'string') {
    const say = respelling(value.value, key, keyLine, report);
    if (say === undefined) {
      report('error', keyLine, `"${key}" has nothing after the colon: write ${FORMS}`);
      return undefined;
    }
    return { say, open: `<sub alias="${escapeAttribute(say)}">`, close: '</sub>' };
  }
  if (value === null || value === undefined) {
    report('error', keyLine, `"${key}" has nothing after the colon: write ${FORMS}`);
    return undefined;
  }
  if (!isMap(value)) {
    report('error', keyLine, `"${key}" must be ${FORMS}, not a ${isSeq(value) ? 'list' : 'value of another kind'}`);
    return undefined;
  }
  const fields = new Map<string, { text: string; line: number }>();
  let broken = false;
  for (const pair of value.items) {
    const fieldKey = resolve(doc, pair.key);
    const name = isScalar(fieldKey) && typeof fieldKey.value === 'string' ? fieldKey.value.trim() : undefined;
    const line = lineOf(pair.key, keyLine);
    if (name === undefined || !FIELDS.includes(name)) {
      report('warning', line, `"${key}": unknown field${name === undefined ? '' : ` "${name}"`} is ignored (known: ${FIELDS.join(', ')})`);
      continue;
    }
    const fieldValue = resolve(doc, pair.value);
    if (fieldValue !== null && fieldValue !== undefined && !(isScalar(fieldValue) && typeof fieldValue.value === 'string')) {
      report('error', line, `"${key}": ${name} must be text`);
      broken = true;
      continue;
    }
    if (fields.has(name)) report('warning', line, `"${key}": ${name} is given twice; the later one is used`);
    fields.set(name, { text: isScalar(fieldValue) ? String(fieldValue.value) : '', line });
  }
  if (broken) return undefined;

  const sayField = fields.get('say');
  const say = sayField && respelling(sayField.text, key, sayField.line, report);
  const ipaField = fields.get('ipa');
  const ipa = ipaField?.text.trim() || undefined;
  const alphabetField = fields.get('alphabet');
  let alphabet: Alphabet = 'ipa';
  if (alphabetField) {
    const written = alphabetField.text.trim().toLowerCase();
    if (written !== 'ipa' && written !== 'x-sampa') {
      report('error', alphabetField.line, `"${key}": alphabet must be ipa or x-sampa, not "${alphabetField.text.trim()}"`);
      return undefined;
    }
    alphabet = written;
  }
  if (say === undefined && ipa === undefined) {
    report('error', keyLine, `"${key}" has neither say nor ipa`);
    return undefined;
  }
  if (ipa !== undefined && alphabet === 'ipa' && ipa.includes('"')) {
    report('error', ipaField!.line, `"${key}": ipa must not hold '"' (IPA's stress mark is ˈ)`);
    return undefined;
  }
  if (ipa === undefined) return { say, open: `<sub alias="${escapeAttribute(say!)}">`, close: '</sub>' };
  return { say, open: `<phoneme alphabet="${alphabet}" ph="${escapeAttribute(ipa)}">`, close: '</phoneme>' };
}

/** A respelling as plain text, or undefined when nothing is left of it. */
function respelling(written: string, key: string, line: number, report: Report): string | undefined {
  const said = written.replace(/[<>]/gu, '').replace(/\s+/gu, ' ').trim();
  if (said !== written.replace(/\s+/gu, ' ').trim()) {
    report('warning', line, `"${key}": "<" and ">" are left out of the respelling: it is said as plain text`);
  }
  return said === '' ? undefined : said;
}

function resolve(doc: Document, node: unknown): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

/** An attribute's value in double quotes, and within what ssml.ts takes for a tag (no `<` or `>`). */
function escapeAttribute(value: string): string {
  return value.replace(/&/gu, '&amp;').replace(/"/gu, '&quot;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;');
}
