/**
 * Questions and their answers kept in YAML, each entry one passage: an answer
 * is already about the size of one, and its question is the best heading it could have.
 */
import { isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type YAMLMap } from 'yaml';
import { collapse } from './blocks.js';
import { DocumentError, type Passage } from './passage.js';

const SHAPE = 'an FAQ is a list of entries with "question" and "answer" (or "q" and "a"), at the top or under "questions:" or "faq:"';
const LIST_KEYS = ['questions', 'faq'] as const;

/** The passages of an FAQ file (text already decoded, lines ending in "\n"). */
export function faqPassages(text: string): Passage[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const lineOf = (node: unknown): number | undefined => (isNode(node) && node.range ? lineCounter.linePos(node.range[0]).line : undefined);
  const error = doc.errors[0];
  if (error) throw new DocumentError(`not valid YAML: ${error.message.split('\n')[0] ?? error.message}`, lineCounter.linePos(error.pos[0]).line);

  return entriesOf(doc.contents, lineOf).map((entry) => {
    const line = lineOf(entry);
    if (!isMap(entry)) throw new DocumentError(`an entry is not a question with its answer: ${SHAPE}`, line);
    const question = field(entry, 'question', 'q', line);
    const answer = field(entry, 'answer', 'a', line);
    return { heading: question, line: line ?? 1, text: `${question}\n${answer}` };
  });
}

/** The entries, wherever the file keeps them; none while it holds nothing yet (an empty file, "faq:" alone). */
function entriesOf(contents: unknown, lineOf: (node: unknown) => number | undefined): readonly unknown[] {
  if (isEmpty(contents)) return [];
  if (isSeq(contents)) return contents.items;
  if (isMap(contents)) {
    const key = LIST_KEYS.find((name) => contents.has(name));
    const list: unknown = key === undefined ? undefined : contents.get(key, true);
    if (key !== undefined && isEmpty(list)) return [];
    if (isSeq(list)) return list.items;
    if (key !== undefined) throw new DocumentError(`"${key}:" does not hold a list: ${SHAPE}`, lineOf(list));
  }
  throw new DocumentError(`no list of questions: ${SHAPE}`, lineOf(contents));
}

/** The entry's text under `name` or its short form, as one line; a missing or non-text one is the writer's to fix. */
function field(entry: YAMLMap, name: string, short: string, line: number | undefined): string {
  const node: unknown = entry.get(entry.has(name) ? name : short, true);
  const missing = new DocumentError(`the entry has no ${name} (write "${name}:" or "${short}:")`, line);
  if (isEmpty(node)) throw missing;
  if (!isScalar(node)) throw new DocumentError(`the entry's ${name} is not text`, line);
  // A bare 24 or true is read by YAML as a number or a yes/no, not as the words written.
  if (typeof node.value !== 'string') throw new DocumentError(`the entry's ${name} is not text (put it in quotes)`, line);
  const text = collapse(node.value);
  if (text === '') throw missing;
  return text;
}

function isEmpty(node: unknown): boolean {
  return node === undefined || node === null || (isScalar(node) && (node.value === null || node.value === undefined));
}
