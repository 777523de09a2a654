/**
 * Reads scenario files. Every problem is reported as `file:line: path: problem`,
 * so a broken scenario can be fixed without reading the schema.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseYamlFile } from '../yaml-file.js';
import { ScenarioSchema, type Scenario } from './schema.js';

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
  const parsed = parseYamlFile(text, ScenarioSchema);
  if ('data' in parsed) return parsed.data;
  throw new ScenarioFileError(
    file,
    parsed.problems.map(({ line, path: where, message }) => `${file}${line ? `:${line}` : ''}: ${where ? `${where}: ` : ''}${message}`),
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
