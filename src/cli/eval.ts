/**
 * Runs the evals of a prompt folder against the configured model (or the
 * built-in scripted one), and with --compare against a second folder too.
 *
 *   npm run eval -- [name | file.yaml]... [--prompts dir] [--runs 5] [--compare dir] ...
 *
 * Exit code 0: every eval passed (and nothing got worse beyond chance);
 * 1: a criterion or check below its pass rate, or a regression; 3: an eval
 * could not be graded at all (a model failed); 2: bad usage or eval files.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { config as loadDotenv } from 'dotenv';
import { command, endQuietlyWhenOutputCloses, numberOption, parseCommandLine, usageToStderr, UsageError, wantsHelp } from '../command-line.js';
import { loadPriceTable } from '../llm/prices.js';
import { evalModels } from '../evals/eval-models.js';
import { runSuite, type SuiteResult } from '../evals/eval-suite.js';
import { EvalFileError, evalFilesIn, loadEvals, type LoadedEval } from '../evals/load-evals.js';
import { htmlReport } from '../evals/report-html.js';
import { junitReport } from '../evals/report-junit.js';
import { textReport } from '../evals/report-text.js';
import { isMain } from './is-main.js';

export const USAGE = `Usage: npm run eval -- [name | file.yaml]... [options]

Plays each eval of <prompts>/evals (or the names and files given) as phone calls to a Hotline
started in-process with that prompt folder: a simulated caller talks to it over the real
WebSocket, a judge grades each criterion from the call as heard, and the checks are made.
  --prompts <dir>        the prompt folder to evaluate (default PROMPTS_DIR, else prompts/)
  --runs <n>             runs of each eval: models vary (default 5)
  --compare <dir>        also run the evals against this folder (the prompts before an edit)
                         and show what got better or worse
  --concurrency <n>      calls at once (default 4)
  --min-pass-rate <r>    a criterion passing less often than this fails (0..1, default 0.8;
                         an eval's min_pass_rate wins)
  --out <dir>            where report.html and junit.xml go (default eval-results)
  --speed <x>            how much faster than real time the caller hears speech (default 4)
  --answer-timeout <ms>  how long one answer may take, tools and all (default 30000)
  --verbose              also print the worst run's transcript of each eval that failed

Models (also read from .env): the agent is Hotline's own LLM (OPENAI_API_KEY, OPENAI_BASE_URL,
LLM_MODEL); the caller and the judge take EVAL_CALLER_* and EVAL_JUDGE_* (_API_KEY, _BASE_URL,
_MODEL, _TEMPERATURE), each defaulting to the agent's. With no LLM set, all three are the
built-in scripted model, playing each eval's scripted: section.

Examples:
  npm run eval
  npm run eval -- book-callback --runs 10
  npm run eval -- --compare prompts-before-edit`;

const EVAL = command({
  name: 'eval',
  usage: USAGE,
  allowPositionals: true,
  options: {
    prompts: { type: 'string' },
    runs: { type: 'string' },
    compare: { type: 'string' },
    concurrency: { type: 'string' },
    'min-pass-rate': { type: 'string' },
    out: { type: 'string' },
    speed: { type: 'string' },
    'answer-timeout': { type: 'string' },
    verbose: { type: 'boolean' },
  },
});

type Out = (line: string) => void;

export interface EvalCliOptions {
  /** Aborting it hangs every call up (Ctrl-C). */
  signal?: AbortSignal;
  now?: () => Date;
}

export async function runEvalCli(
  argv: string[],
  env: Readonly<Record<string, string | undefined>>,
  out: Out,
  reportUsage?: (message: string) => void,
  options: EvalCliOptions = {},
): Promise<number> {
  const refuse = (message: string): number => {
    if (reportUsage) reportUsage(message);
    else out(message);
    return 2;
  };
  let settings;
  try {
    const parsed = parseCommandLine(EVAL, argv);
    if (wantsHelp(parsed)) {
      out(USAGE);
      return 0;
    }
    settings = await readSettings(parsed.values, parsed.positionals, env);
  } catch (error) {
    if (error instanceof UsageError) return refuse(error.message);
    if (error instanceof EvalFileError) return refuse(`the eval files have problems:\n${error.problems.map((p) => `  ${p}`).join('\n')}`);
    throw error;
  }
  const { evals, promptsDir, compareWith, runs, concurrency, minPassRate, outDir, speed, answerTimeoutMs } = settings;
  let prices;
  try {
    prices = await loadPriceTable(env.LLM_PRICES_FILE || undefined);
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
  const models = evalModels(env);
  out(`${evals.length} evals × ${runs} runs${compareWith ? ` × 2 prompt folders` : ''}, ${concurrency} calls at once`);
  const result = await runSuite({
    evals,
    promptsDir,
    ...(compareWith === undefined ? {} : { compareWith }),
    runs,
    concurrency,
    minPassRate,
    models,
    prices,
    play: { wpm: 160, speed, answerTimeoutMs },
    signal: options.signal ?? new AbortController().signal,
    runEnded: (name, folder, run) => {
      const side = compareWith === undefined ? '' : folder === compareWith ? ' (before)' : ' (after)';
      out(`  ${name}${side} run ${run.run}: ${run.error !== undefined ? `not graded — ${run.error}` : `${run.verdicts.filter((v) => !v.pass).length + run.checks.filter((c) => !c.pass).length} failed`}`);
    },
  });
  for (const line of textReport(result, { transcripts: settings.verbose })) out(line);
  await mkdir(outDir, { recursive: true });
  const htmlFile = path.join(outDir, 'report.html');
  const junitFile = path.join(outDir, 'junit.xml');
  await writeFile(htmlFile, htmlReport(result, (options.now ?? (() => new Date()))()));
  await writeFile(junitFile, junitReport(result));
  out(`report: ${htmlFile} · JUnit: ${junitFile}`);
  return exitCode(result);
}

function exitCode(result: SuiteResult): number {
  if (result.summaries.some((s) => s.status === 'failed') || (result.comparison?.regressions.length ?? 0) > 0) return 1;
  if (result.summaries.some((s) => s.status === 'error')) return 3;
  return 0;
}

async function readSettings(
  values: {
    prompts?: string;
    runs?: string;
    compare?: string;
    concurrency?: string;
    'min-pass-rate'?: string;
    out?: string;
    speed?: string;
    'answer-timeout'?: string;
    verbose?: boolean;
  },
  positionals: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
) {
  const promptsDir = path.resolve(values.prompts ?? (env.PROMPTS_DIR || path.resolve(import.meta.dirname, '..', '..', 'prompts')));
  const compareWith = values.compare === undefined ? undefined : path.resolve(values.compare);
  for (const dir of [promptsDir, ...(compareWith ? [compareWith] : [])]) {
    const isDir = await stat(dir).then((s) => s.isDirectory(), () => false);
    if (!isDir) throw new UsageError(`${dir} is not a folder: give a prompt folder (with system.md)`);
  }
  const runs = numberOption('--runs', values.runs, 5, { min: 1, integer: true });
  const concurrency = numberOption('--concurrency', values.concurrency, 4, { min: 1, integer: true });
  const minPassRate = numberOption('--min-pass-rate', values['min-pass-rate'], 0.8);
  if (minPassRate > 1) throw new UsageError(`--min-pass-rate is a rate from 0 to 1, not "${values['min-pass-rate']}".`);
  const speed = numberOption('--speed', values.speed, 4, { min: 0, aboveMin: true });
  const answerTimeoutMs = numberOption('--answer-timeout', values['answer-timeout'], 30_000, { min: 1, integer: true });
  const evals = await selectEvals(promptsDir, positionals);
  if (evals.length === 0) throw new UsageError(`no evals in ${path.join(promptsDir, 'evals')}: write one (see prompts/evals/ of Hotline's repository)`);
  const outDir = path.resolve(values.out ?? 'eval-results');
  return { evals, promptsDir, compareWith, runs, concurrency, minPassRate, outDir, speed, answerTimeoutMs, verbose: values.verbose ?? false };
}

/** Every eval of the folder, or those named (by name or file). */
async function selectEvals(promptsDir: string, positionals: readonly string[]): Promise<LoadedEval[]> {
  const inFolder = await evalFilesIn(promptsDir);
  if (positionals.length === 0) return loadEvals(inFolder.map(relative));
  const files: string[] = [];
  const names: string[] = [];
  for (const arg of positionals) {
    if (await stat(arg).then((s) => s.isFile(), () => false)) files.push(arg);
    else names.push(arg);
  }
  const known = names.length === 0 ? [] : await loadEvals(inFolder.map(relative));
  const missing = names.filter((name) => !known.some((loaded) => loaded.evaluation.name === name));
  if (missing.length > 0) {
    throw new UsageError(`no eval named ${missing.map((n) => `"${n}"`).join(', ')} (and no such file). Known: ${known.map((l) => l.evaluation.name).join(', ') || 'none'}`);
  }
  return [...(await loadEvals(files)), ...known.filter((loaded) => names.includes(loaded.evaluation.name))];
}

function relative(file: string): string {
  return path.relative(process.cwd(), file);
}

if (isMain(import.meta.url)) {
  const controller = new AbortController();
  endQuietlyWhenOutputCloses(() => controller.abort());
  process.once('SIGINT', () => controller.abort());
  // The agent's, caller's and judge's keys may be in .env, as Hotline's own are.
  loadDotenv({ quiet: true });
  runEvalCli(process.argv.slice(2), process.env, (line) => process.stdout.write(`${line}\n`), usageToStderr('eval'), { signal: controller.signal }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`eval failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
