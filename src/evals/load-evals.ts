/**
 * Reads eval files. Every problem is reported as `file:line: path: problem`,
 * and one broken file does not hide the others.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseYamlFile } from '../yaml-file.js';
import { EvalSchema, type Eval } from './eval-schema.js';

export interface LoadedEval {
  readonly file: string;
  readonly evaluation: Eval;
}

export class EvalFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(problems.join('\n'));
    this.name = 'EvalFileError';
  }
}

export function parseEval(text: string, file: string): Eval {
  const parsed = parseYamlFile(text, EvalSchema);
  if ('data' in parsed) return parsed.data;
  throw new EvalFileError(
    file,
    parsed.problems.map(({ line, path: where, message }) => `${file}${line ? `:${line}` : ''}: ${where ? `${where}: ` : ''}${message}`),
  );
}

/** The evals of `<prompts>/evals`, sorted by file name; an empty list when there is no such folder. */
export async function evalFilesIn(promptsDir: string): Promise<string[]> {
  const dir = path.join(promptsDir, 'evals');
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile() && /\.ya?ml$/i.test(entry.name))
    .map((entry) => path.join(dir, entry.name))
    .sort();
}

/** Loads each file; throws one EvalFileError naming every problem of every file (and names used twice). */
export async function loadEvals(files: readonly string[]): Promise<LoadedEval[]> {
  const loaded: LoadedEval[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    try {
      const evaluation = parseEval(await readText(file), file);
      const earlier = seen.get(evaluation.name);
      if (earlier !== undefined) throw new EvalFileError(file, [`${file}: name: "${evaluation.name}" is already the name of ${earlier}`]);
      seen.set(evaluation.name, file);
      loaded.push({ file, evaluation });
    } catch (error) {
      if (!(error instanceof EvalFileError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new EvalFileError(files.join(', '), problems);
  return loaded;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new EvalFileError(file, [`${file}: cannot be read (${error instanceof Error ? error.message : String(error)})`]);
  }
}
