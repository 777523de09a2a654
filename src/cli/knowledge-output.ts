/**
 * What `npm run knowledge` prints: the passages a question finds, and the index's state, as text
 * for a person or as JSON for a script. Pure: data in, text out.
 */
import type { KnowledgePassage } from '../call/ports/knowledge.js';
import type { KnowledgeProblem } from '../knowledge/knowledge-base.js';
import type { KnowledgeSource } from '../store/knowledge-repository.js';

/** A passage's text is wrapped to this many characters a line, its number's indent included. */
const WIDTH = 100;
/** Lines of a passage's text shown: enough to tell it is the right one; --json has all of it. */
const TEXT_LINES = 3;
const INDENT = '   ';

/** A file of the folder, with what the index holds of it and what is wrong with it. */
export interface StatusFile {
  readonly file: string;
  readonly language: string;
  /** What the index holds of it; undefined when it was never read (it cannot be). */
  readonly indexed: KnowledgeSource | undefined;
  readonly problem: KnowledgeProblem | undefined;
}

/** What `status` shows: the folder, the store, each file, the totals. */
export interface StatusReport {
  readonly dir: string;
  /** Whether the folder is there: a missing one is no documents, said as such. */
  readonly dirExists: boolean;
  readonly store: { readonly dialect: string; readonly where: string };
  readonly files: readonly StatusFile[];
  readonly passages: number;
  readonly problems: readonly KnowledgeProblem[];
}

/**
 * The passages, numbered, each with its place and score and the start of its text. `noDocumentsIn`:
 * the folder, when the index holds nothing of it (nothing found then says why).
 */
export function searchText(question: string, passages: readonly KnowledgePassage[], noDocumentsIn: string | undefined): string {
  if (passages.length === 0) {
    const why = noDocumentsIn !== undefined ? ` (there are no documents in ${noDocumentsIn})` : '';
    return `nothing in the documents matches "${question}"${why}.\nThe model would be told so beside the caller's words, and not to guess.\n`;
  }
  return passages
    .map((p, i) => {
      const head = `${i + 1}. ${p.source}${p.heading ? ` › ${p.heading}` : ''} (${where(p)})  score ${score(p.score)}`;
      return [head, ...cutText(p.text, WIDTH - INDENT.length, TEXT_LINES).map((line) => `${INDENT}${line}`)].join('\n');
    })
    .join('\n')
    .concat('\n');
}

/** The passages for a script: every field, the whole text. */
export function searchJson(passages: readonly KnowledgePassage[]): string {
  const rows = passages.map((p) => ({ source: p.source, heading: p.heading, line: p.line, page: p.page ?? null, score: p.score, text: p.text }));
  return `${JSON.stringify(rows, null, 2)}\n`;
}

/** The index's state for a person: a table of the files, then the problems, then the totals. */
export function statusText(report: StatusReport): string {
  const lines = [`folder: ${report.dir}${report.dirExists ? '' : ' (it does not exist: no documents)'}`, `store: ${report.store.dialect} ${report.store.where}`];
  if (report.files.length > 0) {
    const embedded = report.files.some((f) => f.indexed?.embedded !== undefined);
    const header = ['file', 'language', 'passages', 'indexed', ...(embedded ? ['embedded with'] : [])];
    const rows = report.files.map((f) => [
      f.file,
      f.language,
      f.indexed ? String(f.indexed.passages) : '-',
      f.indexed ? shortTime(f.indexed.indexedAt) : 'not indexed',
      ...(embedded ? [f.indexed?.embedded ?? '-'] : []),
    ]);
    lines.push(...table([header, ...rows]));
  }
  if (report.problems.length > 0) {
    lines.push('problems:');
    for (const problem of report.problems) {
      const kept = report.files.find((f) => f.file === problem.file)?.indexed;
      const consequence = kept ? `its version indexed ${shortTime(kept.indexedAt)} is searched` : 'it is left out until it can be read';
      lines.push(`  ${problemLine(problem)} (${consequence})`);
    }
  }
  lines.push(`${plural(report.files.length, 'file')}, ${plural(report.passages, 'passage')}, ${plural(report.problems.length, 'problem')}`);
  return `${lines.join('\n')}\n`;
}

/** The index's state for a script: absent values are null, so every file has the same fields. */
export function statusJson(report: StatusReport): string {
  const json = {
    dir: report.dir,
    dirExists: report.dirExists,
    store: report.store,
    files: report.files.map((f) => ({
      file: f.file,
      language: f.language,
      passages: f.indexed?.passages ?? null,
      indexedAt: f.indexed?.indexedAt ?? null,
      embedded: f.indexed?.embedded ?? null,
      problem: f.problem ? problemJson(f.problem) : null,
    })),
    problems: report.problems.map(problemJson),
    totals: { files: report.files.length, passages: report.passages, problems: report.problems.length },
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}

/** `faq.yaml line 6: not valid YAML: …`: where, then what. */
export function problemLine(problem: KnowledgeProblem): string {
  return `${problem.file}${problem.line !== undefined ? ` line ${problem.line}` : ''}: ${whatIsWrong(problem)}`;
}

function problemJson(problem: KnowledgeProblem): { file: string; line: number | null; message: string } {
  return { file: problem.file, line: problem.line ?? null, message: whatIsWrong(problem) };
}

/** The message without the file and line it may start with (a DocumentError's does): they are said apart. */
function whatIsWrong(problem: KnowledgeProblem): string {
  const prefixes = [`${problem.file} line ${problem.line}: `, `${problem.file}: `];
  const prefix = prefixes.find((p) => problem.message.startsWith(p));
  return prefix ? problem.message.slice(prefix.length) : problem.message;
}

function where(passage: KnowledgePassage): string {
  return passage.page !== undefined ? `page ${passage.page}, line ${passage.line}` : `line ${passage.line}`;
}

/** BM25's scores are units; fused ranks' are hundredths, which two decimals would round away. */
function score(value: number): string {
  return Math.abs(value) >= 1 ? value.toFixed(2) : value.toPrecision(2);
}

/** `text` on lines of at most `width`, at most `max` of them; cut short, the last ends in "…". */
function cutText(text: string, width: number, max: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    // A word longer than a line (a URL) is broken where the line ends.
    for (let rest = word; rest !== ''; ) {
      const room = line === '' ? width : width - line.length - 1;
      if (rest.length <= room) {
        line = line === '' ? rest : `${line} ${rest}`;
        rest = '';
      } else if (line !== '') {
        lines.push(line);
        line = '';
      } else {
        lines.push(rest.slice(0, width));
        rest = rest.slice(width);
      }
    }
  }
  if (line !== '') lines.push(line);
  if (lines.length <= max) return lines;
  const last = lines[max - 1]!;
  // Room for " …": the last word that fits goes, or the line is cut where it has no space.
  const space = last.lastIndexOf(' ', width - 2);
  const kept = last.length + 2 <= width ? last : space > 0 ? last.slice(0, space) : last.slice(0, width - 2);
  return [...lines.slice(0, max - 1), `${kept} …`];
}

function table(rows: readonly (readonly string[])[]): string[] {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd());
}

/** To the second, in UTC: milliseconds only make a table wider. */
function shortTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}
