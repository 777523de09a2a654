/**
 * The configuration reference (docs/configuration.md and .env.example, written by `npm run config:docs`
 * from the descriptions beside the schema) against the code: the files are what the generator writes,
 * every variable the code reads is listed, every listed one is read, and the defaults they state are
 * the ones loadConfig applies.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadConfig, EnvSchema } from '../src/config.js';
import { configReference } from '../src/config-reference.js';
import { staleFiles } from '../src/cli/config-docs.js';
import { RETENTION_DEFAULT_VARIABLE, RETENTION_VARIABLES } from '../src/privacy/retention.js';
import { environmentReads } from './helpers/env-reads.js';

const root = path.resolve(import.meta.dirname, '..');
const reference = configReference();
const listed = new Set(reference.map((entry) => entry.name));

/** What the shipped tool files look up as `${NAME}` (comments aside): the tools' code reads these by a computed name. */
function toolFileVariables(): string[] {
  const dir = path.join(root, 'prompts', 'tools');
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.yaml'))) {
    const text = readFileSync(path.join(dir, file), 'utf8').replace(/(^|\s)#.*$/gm, '');
    for (const match of text.matchAll(/\$\{([A-Z][A-Z0-9_]*)\}/g)) names.add(match[1]!);
  }
  return [...names];
}

/**
 * Each read whose name the scan cannot see (`env[name]`, `Object.entries(env)`), by file and expression,
 * with the names it can read. A new computed read fails the test until it is explained here.
 */
const COMPUTED_READS: Record<string, readonly string[]> = {
  // loadConfig drops empty values before the schema reads its keys.
  'src/config.ts: Object.entries(env)': [],
  // set('OPENAI_API_KEY') and set('OPENAI_BASE_URL').
  'src/prompts-check.ts: name': ['OPENAI_API_KEY', 'OPENAI_BASE_URL'],
  // An eval's or scenario's env: the settings a call with a language needs on.
  'src/scenarios/language-check.ts: name': ['LANGUAGES', 'CONFIGURE_TRANSCRIPTION'],
  'src/evals/eval-models.ts: `${prefix}_API_KEY`': ['EVAL_CALLER_API_KEY', 'EVAL_JUDGE_API_KEY'],
  'src/evals/eval-models.ts: `${prefix}_BASE_URL`': ['EVAL_CALLER_BASE_URL', 'EVAL_JUDGE_BASE_URL'],
  'src/evals/eval-models.ts: `${prefix}_MODEL`': ['EVAL_CALLER_MODEL', 'EVAL_JUDGE_MODEL'],
  'src/evals/eval-models.ts: `${prefix}_TEMPERATURE`': ['EVAL_CALLER_TEMPERATURE', 'EVAL_JUDGE_TEMPERATURE'],
  // AGENT_VARIABLES, handed to the agent's Hotline.
  'src/evals/eval-models.ts: name': ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'LLM_MODEL', 'LLM_TEMPERATURE', 'LLM_TIMEOUT_MS', 'LLM_PRICES_FILE'],
  'src/privacy/retention-settings.ts: RETENTION_DEFAULT_VARIABLE': [RETENTION_DEFAULT_VARIABLE],
  'src/privacy/retention-settings.ts: RETENTION_VARIABLES[kind]': Object.values(RETENTION_VARIABLES),
  // A scenario file's own env: section, not the process's environment.
  'src/scenarios/hotline-env.ts: Object.entries(env)': [],
  // LIVE_LLM_VARIABLES, handed to a live scenario's Hotline.
  'src/scenarios/stack.ts: name': ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'LLM_MODEL', 'LLM_TEMPERATURE', 'LLM_TIMEOUT_MS'],
  // A tool file's `${NAME}`: whatever the business names; the shipped files' names are listed.
  'src/tools/env-refs.ts: name': toolFileVariables(),
  'src/tools/mcp-endpoint.ts: name': toolFileVariables(),
  'src/tools/tool-store.ts: name': toolFileVariables(),
  // The bench's and the soak's own: what they pass their children.
  'bench/far-side-main.ts: FAR_SIDE_CONFIG_VARIABLE': ['HOTLINE_BENCH_FAR_SIDE'],
  'bench/far-side.ts: name': ['PATH', 'HOME', 'TMPDIR', 'LANG'],
  'bench/hotline-process.ts: name': ['PATH', 'HOME', 'TMPDIR', 'LANG'],
  'bench/thread-process.ts: name': ['PATH', 'HOME', 'TMPDIR', 'LANG'],
  'bench/process-probe.ts: PROBE_PORT_VARIABLE': ['HOTLINE_BENCH_PROBE_PORT'],
  'soak/hotline-child.ts: Object.entries(process.env)': ['MALLOC_*'],
};

/**
 * Read by the code but no configuration of Hotline's, so left out of the reference: the bench and the
 * soak (instruments a developer runs, never deployed) pass the system's variables to their children and
 * tell them their part in variables of their own. Listed in .env.example, they would invite setting
 * them in .env, where none of them does anything.
 */
const NOT_CONFIGURATION: Record<string, string> = {
  PATH: "the system's, passed on to the bench's and the soak's Hotline",
  HOME: "the system's, passed on to the bench's children",
  TMPDIR: "the system's, passed on to the bench's children",
  LANG: "the system's, passed on to the bench's children",
  NODE_OPTIONS: "Node's own: the bench takes --cpu-prof out of it for its children",
  'MALLOC_*': "glibc's, passed on by the soak to compare memory with and without them",
  HOTLINE_BENCH_FAR_SIDE: 'the bench tells its far-side child its settings',
  HOTLINE_BENCH_PROBE_PORT: 'the bench tells its Hotline where to report',
  HOTLINE_BENCH_CPU_PROFILE_DIR: "the bench's own: where the Hotline processes it starts write CPU profiles",
};

/** The variables read by Node itself, not by any line of Hotline's. */
const READ_BY_NODE = new Set(reference.filter((entry) => entry.section === 'node').map((entry) => entry.name));

const reads = environmentReads(root, ['src', 'bench', 'soak']);

describe('the configuration reference', () => {
  test('docs/configuration.md and .env.example are what npm run config:docs writes', async () => {
    // Stale: edit the description beside the schema entry (src/config-*.ts), then run npm run config:docs.
    expect(await staleFiles()).toEqual([]);
  });

  test('every computed read of the environment is explained, and every explanation still matches one', () => {
    const found = new Set(reads.computed.map((read) => `${read.file}: ${read.expression}`));
    expect([...found].filter((key) => !(key in COMPUTED_READS)), 'computed reads to explain in COMPUTED_READS').toEqual([]);
    expect(Object.keys(COMPUTED_READS).filter((key) => !found.has(key)), 'explanations nothing matches any more').toEqual([]);
  });

  test('lists every variable the code reads', () => {
    const read = new Set([...reads.named.map((r) => r.name), ...Object.values(COMPUTED_READS).flat()]);
    const missing = [...read].filter((name) => !listed.has(name) && !(name in NOT_CONFIGURATION)).sort();
    const where = missing.map((name) => `${name} (${[...new Set(reads.named.filter((r) => r.name === name).map((r) => r.file))].join(', ') || 'a computed read'})`);
    expect(where, 'read by the code, missing from the reference').toEqual([]);
  });

  test('lists only variables something reads', () => {
    // loadConfig reads every key of the schema; the rest are read by name somewhere, or by Node.
    const read = new Set([...Object.keys(EnvSchema.shape), ...reads.named.map((r) => r.name), ...Object.values(COMPUTED_READS).flat(), ...READ_BY_NODE]);
    expect([...listed].filter((name) => !read.has(name)), 'listed, but nothing reads them').toEqual([]);
    expect(Object.keys(NOT_CONFIGURATION).filter((name) => listed.has(name)), 'both listed and said not to be configuration').toEqual([]);
  });

  test('.env.example sets each variable that has a default to it, and the configuration is then the default one', () => {
    const text = readFileSync(path.join(root, '.env.example'), 'utf8');
    const set = Object.fromEntries([...text.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    const withDefault = reference.filter((entry) => entry.default !== undefined);
    expect(Object.keys(set).sort()).toEqual(withDefault.map((entry) => entry.name).sort());
    // The documented ./prompts and ./data/transcripts are relative to the working directory, the project's here as for npm start.
    expect(process.cwd()).toBe(root);
    expect(loadConfig(set)).toEqual(loadConfig({}));
  });

  test.each(reference.filter((entry) => entry.default !== undefined).map((entry) => [entry.name, entry.default!]))(
    '%s=%s is what unset means',
    (name, value) => {
      // One at a time as well, so a failure names the variable.
      expect(loadConfig({ [name]: value })).toEqual(loadConfig({}));
    },
  );

  test('the defaults stated in words are the ones the code works out', () => {
    const config = loadConfig({});
    const words = (name: string) => reference.find((entry) => entry.name === name)?.unsetMeans;
    expect(words('DATABASE_FILE')).toMatch(/hotline\.db in TRANSCRIPTS_DIR/);
    expect(config.databaseFile).toBe(path.join(config.transcriptsDir, 'hotline.db'));
    expect(words('REPLICA_ID')).toMatch(/host name/);
    expect(config.replica.id).toBe(hostname().slice(0, 64));
    expect(words('INTERNAL_PORT')).toMatch(/any free one/);
    expect(config.replica.internalPort).toBe(0);
    expect(words('OPENAI_BASE_URL')).toBe('OpenAI');
    expect(config.llm.baseURL).toBeUndefined();
    expect(words('TRANSFER_TIMEOUT_SECONDS')).toMatch(/service's default/);
    expect(config.transfer.timeoutSeconds).toBeUndefined();
  });
});
