/**
 * Soak test, not part of CI: runs Hotline in a process of its own under a
 * churning load of calls and reports its heap after GC, RSS and handles over
 * time, and whether the heap stays flat however many calls have ended.
 *
 *   npm run soak -- [--calls 100] [--minutes 10] [--turns 6]      (--help for the usage)
 */
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { command, commandLineOrExit, endQuietlyWhenOutputCloses, numberOption } from '../src/command-line.js';
import { startDemoShop } from '../src/demo/shop.js';
import { startScriptedLlmServer } from '../src/llm/scripted-server.js';
import { censusOf, grownBy, type Census } from './heap-census.js';
import { HotlineChild } from './hotline-child.js';
import type { MemoryFigures } from './hotline-process.js';
import { churn, holdCall, soakScript } from './soak-load.js';

const USAGE = `Usage: npm run soak -- [--calls 100] [--minutes 10] [--turns 6] [--hold]

Soak test, not part of CI. Starts Hotline in a process of its own, a scripted model, an order system
and a report receiver on 127.0.0.1, and keeps calls coming: each call is greeted, asks --turns
questions (one about an order: the order tool runs), hangs up, is reported (fields and webhook), and
the next call takes its place. Every --sample-seconds it prints Hotline's heap after a full GC, RSS,
external memory, handles and open files; at the end, how much the heap grew per ended call since the
baseline taken after the warm-up calls. Exit code 1 when it grew by more than 1 KB per call.
  --calls <n>           calls in progress at once (default 100)
  --minutes <n>         how long the load runs; fractions allowed (default 10)
  --ended <n>           stop after this many calls have ended past the warm-up, instead of --minutes
  --turns <n>           questions per call (default 6)
  --warm-up <n>         calls ended before the baseline is taken (default 5 × --calls, at least 300)
  --sample-seconds <n>  how often figures are printed (default 30)
  --census              also count the heap's objects by class at the baseline and the end, and
                        name the classes that grew with the calls (takes two heap snapshots)
  --hold                the same --calls calls talk for the whole run, then end: what long calls
                        keep, not what ended ones leave behind
  --json                print the final figures as one JSON line

Example:
  npm run soak -- --calls 100 --minutes 5`;

const SOAK = command({
  name: 'soak',
  usage: USAGE,
  allowPositionals: false,
  options: {
    calls: { type: 'string' },
    minutes: { type: 'string' },
    ended: { type: 'string' },
    turns: { type: 'string' },
    'warm-up': { type: 'string' },
    'sample-seconds': { type: 'string' },
    census: { type: 'boolean' },
    hold: { type: 'boolean' },
    json: { type: 'boolean' },
  },
});

// Before any server starts: --help and bad usage end the process here.
const options = commandLineOrExit(SOAK, process.argv.slice(2), ({ values }) => {
  const calls = numberOption('--calls', values.calls, 100, { min: 1, integer: true });
  return {
    calls,
    durationMs: numberOption('--minutes', values.minutes, 10, { min: 0, aboveMin: true }) * 60_000,
    endedTarget: values.ended === undefined ? undefined : numberOption('--ended', values.ended, 0, { min: 1, integer: true }),
    turns: numberOption('--turns', values.turns, 6, { min: 1, integer: true }),
    warmUp: numberOption('--warm-up', values['warm-up'], Math.max(300, 5 * calls), { min: 0, integer: true }),
    sampleMs: numberOption('--sample-seconds', values['sample-seconds'], 30, { min: 1 }) * 1000,
    census: values.census === true,
    hold: values.hold === true,
    json: values.json === true,
  };
});
endQuietlyWhenOutputCloses();

/** Heap growth per ended call that still counts as flat: well under the 6.5 KB per call of issue 21. */
const FLAT_BYTES_PER_CALL = 1024;
/** Below this many calls past the baseline, noise of a megabyte would decide the verdict. */
const CALLS_TO_JUDGE = 1000;

const MB = 1048576;
const mb = (bytes: number): string => (bytes / MB).toFixed(1);
const say = (line: string): void => {
  // With --json the figures go to stdout alone; the running commentary to stderr.
  (options.json ? process.stderr : process.stdout).write(`${line}\n`);
};

const llm = await startScriptedLlmServer({ script: soakScript, host: '127.0.0.1', ttftMs: 20, tokenDelayMs: 2, record: false });
const shop = await startDemoShop({ delayMs: 50 });
let delivered = 0;
let onDelivered: (() => void) | undefined;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    delivered += 1;
    res.writeHead(204).end();
    onDelivered?.();
  });
});
/** Every ended call's report stored and delivered (or a minute passed): what is measured next is what stays. */
async function settle(): Promise<void> {
  // Every report received first, then Hotline done with them (a delivery's answer handled): what is
  // measured next is what stays.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 60_000);
    onDelivered = () => {
      if (delivered < ended) return;
      clearTimeout(timer);
      resolve();
    };
    onDelivered();
  });
  onDelivered = undefined;
  await hotline.settle();
}
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const dataDir = await mkdtemp(path.join(tmpdir(), 'hotline-soak-'));
const hotline = await HotlineChild.start({
  NODE_ENV: 'test',
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'warn',
  OPENAI_API_KEY: 'soak',
  OPENAI_BASE_URL: llm.baseURL,
  PROMPTS_DIR: fileURLToPath(new URL('../prompts', import.meta.url)),
  TRANSCRIPTS_DIR: path.join(dataDir, 'transcripts'),
  DATABASE_FILE: path.join(dataDir, 'hotline.db'),
  SHOP_API_URL: shop.url,
  REPORT_WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/reports`,
  REPORT_WEBHOOK_SECRET: 'soak-secret-soak-secret-soak-secret',
  RATE_LIMIT_WS_PER_MINUTE: '0',
  MAX_CALLS: String(options.calls * 2),
});

let ended = 0;
let lookups = 0;
let failed = 0;
let lastFailure = '';
const startedAt = Date.now();
const elapsed = (): string => {
  const s = Math.round((Date.now() - startedAt) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
const line = (label: string, f: MemoryFigures): string =>
  `${label}  ended ${ended}  in progress ${f.calls}  heap after GC ${mb(f.heapUsed)} MB (without code ${mb(f.heapWithoutCode)})  ` +
  `RSS ${mb(f.rss)} MB  external ${mb(f.external)} MB  handles ${f.handles}${f.fds === undefined ? '' : `  open files ${f.fds}`}`;

interface Sample extends MemoryFigures {
  atMs: number;
  ended: number;
}
const samples: Sample[] = [];
const takeSample = async (label: string): Promise<Sample> => {
  const figures = await hotline.sample();
  const sample = { ...figures, atMs: Date.now() - startedAt, ended };
  samples.push(sample);
  say(line(label, figures));
  return sample;
};

async function census(name: string): Promise<Census> {
  const file = await hotline.snapshot(path.join(dataDir, `${name}.heapsnapshot`));
  const counted = await censusOf(file);
  await rm(file, { force: true });
  return counted;
}

say(`soak: ${options.hold ? `${options.calls} calls held` : `${options.calls} calls at a time, ${options.turns} questions each`}; Hotline runs in a process of its own`);
let baseline: Sample;
let before: Census | undefined;
let sinceBaseline = 0;
if (options.hold) {
  // The old soak: one warm-up call, then the same calls for the whole run.
  await churn({ wsUrl: hotline.wsUrl, concurrency: 1, turns: 1, goOn: () => ended < 1, ended: () => (ended += 1), failed: () => (failed += 1) });
  await settle();
  baseline = await takeSample(`${elapsed()} baseline`);
  if (options.census) before = await census('baseline');
  const stopAt = Date.now() + options.durationMs;
  let turns = 0;
  const sampler = setInterval(() => void takeSample(`${elapsed()} turns ${turns}`), options.sampleMs);
  await Promise.all(Array.from({ length: options.calls }, (_, lane) => holdCall(hotline.wsUrl, lane, () => Date.now() < stopAt, () => (turns += 1))));
  clearInterval(sampler);
  ended += options.calls;
  sinceBaseline = options.calls;
} else {
  const { warmUp } = options;
  let phase: 'warm-up' | 'measured' = 'warm-up';
  let stopAt = Infinity;
  const goOn = (): boolean =>
    phase === 'warm-up' ? ended < warmUp : options.endedTarget === undefined ? Date.now() < stopAt : ended - warmUp < options.endedTarget;
  const load = (): Promise<void> =>
    churn({
      wsUrl: hotline.wsUrl,
      concurrency: options.calls,
      turns: options.turns,
      goOn,
      ended: (lookedUp) => {
        ended += 1;
        if (lookedUp) lookups += 1;
      },
      failed: (error) => {
        failed += 1;
        lastFailure = error instanceof Error ? error.message : String(error);
      },
    });
  say(`warming up: ${warmUp} calls`);
  await load();
  await settle();
  baseline = await takeSample(`${elapsed()} baseline`);
  if (options.census) before = await census('baseline');
  phase = 'measured';
  stopAt = Date.now() + options.durationMs;
  const sampler = setInterval(() => void takeSample(elapsed()), options.sampleMs);
  await load();
  clearInterval(sampler);
  sinceBaseline = ended - warmUp;
}

await settle();
const end = await takeSample(`${elapsed()} all ended`);
const growthAtLeast = Math.max(50, Math.ceil(sinceBaseline / 10));
let after = before ? await census('end') : undefined;
if (before && after && grownBy(before, after, growthAtLeast).length > 0) {
  // On a loaded machine work still finishing can look like growth once; what a leak keeps is there again.
  await settle();
  after = await census('end-again');
}
const perCall = (bytes: number): number => (sinceBaseline > 0 ? bytes / sinceBaseline : 0);
const bytesPerCall = perCall(end.heapUsed - baseline.heapUsed);
const withoutCodePerCall = perCall(end.heapWithoutCode - baseline.heapWithoutCode);
// The census's bytes leave out what the JIT adds and drops, so they judge where they are known.
const censusPerCall = before && after ? perCall(after.bytes - before.bytes) : undefined;
const grown = before && after ? grownBy(before, after, growthAtLeast) : undefined;
const judged = options.hold || sinceBaseline >= CALLS_TO_JUDGE;
const flat = !judged || ((censusPerCall ?? bytesPerCall) <= FLAT_BYTES_PER_CALL && (grown?.length ?? 0) === 0);

say(
  `heap after GC ${mb(baseline.heapUsed)} → ${mb(end.heapUsed)} MB over ${sinceBaseline} calls: ${Math.round(bytesPerCall)} B per ended call ` +
    `(without code ${Math.round(withoutCodePerCall)} B${censusPerCall === undefined ? '' : `, objects in the heap snapshots ${Math.round(censusPerCall)} B`}); RSS ${mb(baseline.rss)} → ${mb(end.rss)} MB; handles ${baseline.handles} → ${end.handles}; ` +
    `order lookups heard ${lookups}; reports delivered ${delivered}; calls failed ${failed}${failed > 0 ? ` (last: ${lastFailure})` : ''}`,
);
if (grown && grown.length > 0) say(`grew with the calls: ${grown.map(({ name, grew }) => `${name} +${grew}`).join(', ')}`);
say(
  !judged
    ? `too few calls past the baseline to judge (${sinceBaseline} < ${CALLS_TO_JUDGE})`
    : flat
      ? `flat: under ${FLAT_BYTES_PER_CALL} B per ended call${grown ? ', and no class grew with the calls' : ''}`
      : `GROWS: over ${FLAT_BYTES_PER_CALL} B per ended call, or a class grew with the calls`,
);
if (options.json) {
  process.stdout.write(
    `${JSON.stringify({ mode: options.hold ? 'hold' : 'churn', calls: options.calls, turns: options.turns, ended, sinceBaseline, failed, lookups, delivered, bytesPerCall, withoutCodePerCall, censusPerCall, flat, judged, baseline, end, samples, grown })}\n`,
  );
}

await hotline.close();
await llm.close();
await shop.close();
await new Promise<void>((resolve) => receiver.close(() => resolve()));
await rm(dataDir, { recursive: true, force: true });
process.exitCode = flat ? 0 : 1;
