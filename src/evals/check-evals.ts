/**
 * The eval files of a prompt folder, as `npm run prompts:check` lists them: a
 * broken eval is found when the prompts are checked, not when an edit is
 * about to be judged by it.
 */
import path from 'node:path';
import type { CheckedFile } from '../prompts-check.js';
import type { Eval } from './eval-schema.js';
import { EvalFileError, evalFilesIn, loadEvals } from './load-evals.js';

export interface CheckedEval {
  /** Relative to the prompt folder: evals/name.yaml. */
  readonly file: string;
  readonly summary: string;
  readonly problems: readonly string[];
}

export async function checkEvalsFolder(dir: string): Promise<CheckedEval[]> {
  const files = await evalFilesIn(dir);
  return Promise.all(
    files.map(async (file): Promise<CheckedEval> => {
      const name = path.relative(dir, file);
      try {
        const [loaded] = await loadEvals([file]);
        return { file: name, summary: loaded ? describe(loaded.evaluation) : '', problems: [] };
      } catch (error) {
        if (!(error instanceof EvalFileError)) throw error;
        // Each problem names the file already: keep what follows it.
        return { file: name, summary: 'eval (cannot be used)', problems: error.problems.map((p) => p.slice(p.indexOf(': ') + 2)) };
      }
    }),
  );
}

function describe(evaluation: Eval): string {
  // The call's language is checked too.
  const checks = Object.values(evaluation.checks).filter((value) => value !== undefined).length + (evaluation.language === undefined ? 0 : 1);
  const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  const language = evaluation.language === undefined ? '' : ` in ${evaluation.language}`;
  return `eval ${evaluation.name}${language}, ${plural(evaluation.criteria.length, 'criterion').replace('criterions', 'criteria')}, ${plural(checks, 'check')}, ${evaluation.caller.max_turns} turns at most`;
}

/** The evals as `npm run prompts:check` lists them, beside the files Hotline reads. */
export async function checkedEvalFiles(dir: string): Promise<CheckedFile[]> {
  return (await checkEvalsFolder(dir)).map((f) => ({ file: f.file, summary: f.summary, problems: f.problems.map((message) => ({ severity: 'error', message })), kind: 'eval' }));
}
