/**
 * Runs the conversation scenarios in scenarios/ against an in-process Hotline.
 *
 *   npm run scenarios -- [file.yaml | name]... [--live] [--verbose]
 *
 * Prints one line per scenario and `N passed, N failed`; exits 1 if any
 * failed (a file that does not load counts as failed), 2 on bad usage.
 */
import { isMain } from './is-main.js';
import { command, endQuietlyWhenOutputCloses, parseCommandLine, usageToStderr, UsageError, wantsHelp } from '../command-line.js';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { config as loadDotenv } from 'dotenv';
import { loadConfig } from '../config.js';
import { describeAction } from '../scenarios/action-log.js';
import { loadScenarioFiles, scenarioFilesIn, type LoadOutcome } from '../scenarios/load.js';
import { runScenario, type RunOptions, type ScenarioResult } from '../scenarios/run.js';

export const USAGE = `Usage: npm run scenarios -- [file.yaml | name]... [--live] [--verbose]

Runs every scenario in scenarios/ (or the files and scenario names given) against a
Hotline started in-process on the built-in scripted demo model.
  --live      use the LLM configured in the environment (OPENAI_API_KEY, OPENAI_BASE_URL,
              LLM_MODEL, also read from .env) instead (default: the scripted model); scenarios
              marked "requires: scripted" are skipped and model: rules are ignored
  --verbose   list what Hotline sent in each failed scenario (default: only why it failed)
The scripted model's speed comes from DEMO_TTFT_MS and DEMO_TOKEN_DELAY_MS.

Example:
  npm run scenarios -- greeting barge-in --verbose`;

const SCENARIOS = command({
  name: 'scenarios',
  usage: USAGE,
  allowPositionals: true,
  options: { live: { type: 'boolean' }, verbose: { type: 'boolean' } },
});

const SCENARIOS_DIR = path.resolve(import.meta.dirname, '..', '..', 'scenarios');

type Out = (line: string) => void;

/**
 * Runs the command line; returns the exit code. Bad usage goes to `reportUsage`:
 * by default to `out` (with the usage for a bad option); the script sends one line to stderr.
 */
export async function runScenariosCli(
  argv: string[],
  env: Record<string, string | undefined>,
  out: Out,
  reportUsage?: (message: string) => void,
): Promise<number> {
  const refuse = (message: string, withUsage: boolean): number => {
    if (reportUsage) reportUsage(message);
    else out(withUsage ? `${message}\n\n${USAGE}` : message);
    return 2;
  };
  let parsed;
  try {
    parsed = parseCommandLine(SCENARIOS, argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return refuse(error.message, true);
  }
  const { values, positionals } = parsed;
  if (wantsHelp(parsed)) {
    out(USAGE);
    return 0;
  }

  let outcomes: LoadOutcome[];
  try {
    outcomes = await select(positionals);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return refuse(error.message, false);
  }

  const live = values.live ?? false;
  if (live) {
    if (!env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
      out('--live needs an LLM: set OPENAI_API_KEY and/or OPENAI_BASE_URL, and LLM_MODEL (in the environment or .env)');
      return 2;
    }
    out(`live LLM: ${env.LLM_MODEL ?? 'gpt-4o-mini'} at ${env.OPENAI_BASE_URL ?? 'OpenAI'}`);
  }
  const options: RunOptions = live ? { live, env } : { llmTiming: demoTiming(env) };
  let passed = 0;
  let failed = 0;
  for (const outcome of outcomes) {
    if ('error' in outcome) {
      failed++;
      out(`✗ ${outcome.file}: does not load`);
      for (const problem of outcome.error.problems) out(`    ${problem}`);
      continue;
    }
    const result = await runScenario(outcome.scenario, options);
    out(resultLine(result));
    if (result.status === 'passed') passed++;
    if (result.status === 'failed') {
      failed++;
      if (values.verbose) for (const action of result.actions) out(`    ← ${describeAction(action)}`);
    }
  }
  out(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

/** Positionals that name a file are loaded as such; the others must be names of scenarios in scenarios/. */
async function select(positionals: string[]): Promise<LoadOutcome[]> {
  const all = await loadScenarioFiles(await scenarioFilesIn(SCENARIOS_DIR));
  if (positionals.length === 0) return all.map(relativeFile);
  const files: string[] = [];
  const names: string[] = [];
  for (const arg of positionals) {
    const isFile = await stat(arg).then((s) => s.isFile(), () => false);
    if (isFile) files.push(arg);
    else names.push(arg);
  }
  const known = new Map<string, LoadOutcome>();
  for (const outcome of all) if ('scenario' in outcome) known.set(outcome.scenario.name, relativeFile(outcome));
  const missing = names.filter((name) => !known.has(name));
  if (missing.length > 0) {
    throw new UsageError(
      `no scenario named ${missing.map((n) => `"${n}"`).join(', ')} (and no such file). Known: ${[...known.keys()].join(', ')}`,
    );
  }
  return [...(await loadScenarioFiles(files)), ...names.map((name) => known.get(name)).filter((o) => o !== undefined)];
}

function relativeFile(outcome: LoadOutcome): LoadOutcome {
  return { ...outcome, file: path.relative(process.cwd(), outcome.file) };
}

/** The scripted model runs at the demo model's speed: realistic unless DEMO_* say otherwise. */
function demoTiming(env: Record<string, string | undefined>): { ttftMs: number; tokenDelayMs: number } {
  const { demo } = loadConfig({ DEMO_TTFT_MS: env.DEMO_TTFT_MS, DEMO_TOKEN_DELAY_MS: env.DEMO_TOKEN_DELAY_MS });
  return demo;
}

export function resultLine(result: ScenarioResult): string {
  if (result.status === 'passed') return `✓ ${result.name} (${Math.round(result.durationMs)} ms)`;
  if (result.status === 'skipped') return `- ${result.name}: skipped (${result.message ?? ''})`;
  return `✗ ${result.name}: ${result.message ?? 'failed'}`;
}


if (isMain(import.meta.url)) {
  endQuietlyWhenOutputCloses();
  const argv = process.argv.slice(2);
  if (argv.includes('--live')) loadDotenv({ quiet: true });
  runScenariosCli(argv, process.env, (line) => process.stdout.write(`${line}\n`), usageToStderr('scenarios')).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`scenarios failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
