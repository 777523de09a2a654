/**
 * Reads scenario files. Every problem is reported as `file:line: path: problem`,
 * so a broken scenario can be fixed without reading the schema.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isMap, isNode, LineCounter, parseDocument, type Document } from 'yaml';
import { flattenIssues, ScenarioSchema, type Scenario } from './schema.js';

export interface LoadedScenario {
  /** As given (relative paths stay relative): it is what the user will recognise. */
  file: string;
  scenario: Scenario;
}

export class ScenarioFileError extends Error {
  constructor(
    readonly file: string,
    /** One line each, `file:line: path: problem`. */
    readonly problems: string[],
  ) {
    super(problems.join('\n'));
    this.name = 'ScenarioFileError';
  }
}

export type LoadOutcome = LoadedScenario | { file: string; error: ScenarioFileError };

/** Parses one scenario from YAML text; throws a ScenarioFileError naming every problem. */
export function parseScenario(text: string, file: string): Scenario {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ScenarioFileError(
      file,
      doc.errors.map((error) => {
        const line = lineCounter.linePos(error.pos[0]).line;
        return `${file}${line ? `:${line}` : ''}: YAML: ${error.message.split('\n')[0] ?? error.message}`;
      }),
    );
  }
  const data: unknown = doc.toJS();
  if (data === null || data === undefined) throw new ScenarioFileError(file, [`${file}: the file is empty`]);
  const parsed = ScenarioSchema.safeParse(data);
  if (parsed.success) return parsed.data;
  throw new ScenarioFileError(
    file,
    flattenIssues(parsed.error.issues).map(({ path: issuePath, message }) => {
      const line = lineOf(doc, lineCounter, issuePath);
      const where = formatPath(issuePath);
      return `${file}${line ? `:${line}` : ''}: ${where ? `${where}: ` : ''}${message}`;
    }),
  );
}

export async function loadScenarioFile(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ScenarioFileError(file, [`${file}: cannot be read (${error instanceof Error ? error.message : String(error)})`]);
  }
  return parseScenario(text, file);
}

/**
 * Loads the files in order; a bad file becomes an outcome with its error, so
 * one broken scenario does not hide the others. A name used twice is an error
 * of the later file.
 */
export async function loadScenarioFiles(files: readonly string[]): Promise<LoadOutcome[]> {
  const outcomes: LoadOutcome[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    try {
      const scenario = await loadScenarioFile(file);
      const earlier = seen.get(scenario.name);
      if (earlier !== undefined) {
        throw new ScenarioFileError(file, [`${file}: name: "${scenario.name}" is already the name of ${earlier}`]);
      }
      seen.set(scenario.name, file);
      outcomes.push({ file, scenario });
    } catch (error) {
      if (!(error instanceof ScenarioFileError)) throw error;
      outcomes.push({ file, error });
    }
  }
  return outcomes;
}

/** The .yaml and .yml files of a folder, sorted by name. */
export async function scenarioFilesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.ya?ml$/i.test(entry.name))
    .map((entry) => path.join(dir, entry.name))
    .sort();
}

/** `steps[3].expect.speak` */
function formatPath(issuePath: readonly PropertyKey[]): string {
  return issuePath
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

/** The line of the deepest node on the path that exists (a missing key points at its parent). */
function lineOf(doc: Document, lineCounter: LineCounter, issuePath: readonly PropertyKey[]): number | undefined {
  const keys = issuePath.filter((part): part is string | number => typeof part !== 'symbol');
  for (let depth = keys.length; depth >= 0; depth--) {
    const prefix = keys.slice(0, depth);
    const node: unknown = depth === 0 ? doc.contents : doc.getIn(prefix, true);
    const range = isNode(node) ? node.range : undefined;
    if (range) return lineCounter.linePos(keyOffset(doc, prefix) ?? range[0]).line;
  }
  return undefined;
}

/** Where the key of the last path element is written: a null value has no position of its own. */
function keyOffset(doc: Document, keys: readonly (string | number)[]): number | undefined {
  const last = keys.at(-1);
  if (typeof last !== 'string') return undefined;
  const parent: unknown = keys.length === 1 ? doc.contents : doc.getIn(keys.slice(0, -1), true);
  if (!isMap(parent)) return undefined;
  const pair = parent.items.find((item) => isNode(item.key) && 'value' in item.key && item.key.value === last);
  return isNode(pair?.key) ? pair.key.range?.[0] : undefined;
}
