/**
 * Hotline's benchmark: Hotline on a thread of its own, a scripted
 * OpenAI-compatible LLM server and the callers on the main thread (or the LLM
 * server on a third with --llm-thread), calls driven over real WebSockets (and
 * HTTP for the webhook) as the voice service drives them, on 127.0.0.1 only.
 * The callers and the LLM server stand in for other hosts, so their threads
 * give way to Hotline's at the lowest CPU priority (--same-priority keeps them
 * level, to see what sharing two cores with them costs). The workers phase
 * starts Hotline as production runs it instead, node dist/main.js with
 * WORKERS=1 and WORKERS=2 (bench/workers.ts), and the network phase starts it
 * so against a model and a business system over TLS across a link with a set
 * round trip (bench/network.ts). The knowledge phase indexes and searches a
 * synthetic folder of the business's documents on both stores, and measures
 * first-speak overhead with the knowledge base off and on (bench/knowledge.ts). The languages phase
 * measures first-speak overhead with a language per call and pronunciations off and on, and times
 * language detection and a pronouncer alone (bench/languages.ts).
 * Prints a table and, with --out, writes the same figures as JSON. Not part of
 * `npm test`.
 *
 *   npm run bench -- [options]      (USAGE below, or --help, lists them with their defaults)
 */
import { writeFile } from 'node:fs/promises';
import { runBargeIns, type BargeInResult } from './barge-in.js';
import {
  climbLadder,
  measureEventLoop,
  measureMemory,
  measureTarget,
  type CapacityOptions,
  type CapacityResult,
  type LadderOptions,
} from './capacity.js';
import { measureLevel, type FirstSpeakLevel } from './first-speak.js';
import { now } from './clock.js';
import { BenchFixture } from './llm-fixture.js';
import { evaluateTargets, firstSpeakNote, machine, render, type BenchResults } from './report.js';
import { parseCounts } from './stats.js';
import { DEFAULT_POSTGRES_ADMIN_URL, measureFirstSpeakOnStores, measureWriters, type StoreBenchOptions, type StoreBenchResult } from './store-bench.js';
import { warmUp } from './warm-up.js';
import { describePostgresUrl } from '../src/store/postgres/postgres-dialect.js';
import { DashboardViewer, type DashboardResult } from './dashboard-load.js';
import { runWebhook, type WebhookResult } from './webhook.js';
import { measureWorkers, type WorkersResult } from './workers.js';
import { measureOutside, type OutsideResult } from './outside.js';
import { FEATURES, measureFeatures, type FeatureName, type FeaturesResult } from './features.js';
import { measureNetwork, type NetworkResult } from './network.js';
import { KnowledgeFolders, measureFirstSpeakWithKnowledge, measureKnowledgeRetrieval, STALL_AIM_PASSAGES, type KnowledgeBenchResult } from './knowledge.js';
import { LanguagePrompts, measureFirstSpeakWithLanguages, measureLanguageCosts, pronunciationsFigures, LANGUAGES_NOTE, type LanguagesBenchResult } from './languages.js';
import { startOtlpSink, type OtlpSink } from './otlp-sink.js';
import type { LinkKind } from './network-link.js';
import { command, commandLineOrExit, endQuietlyWhenOutputCloses, numberOption, UsageError, type CommandLine } from '../src/command-line.js';

const PHASES = ['outside', 'features', 'first-speak', 'barge-in', 'capacity', 'webhook', 'store', 'workers', 'network', 'knowledge', 'languages'] as const;
/** Phases that start Hotline themselves, apart from the bench's main Hotline on a thread. */
const OWN_HOTLINE: readonly Phase[] = ['outside', 'features', 'store', 'workers', 'network', 'knowledge', 'languages'];
const LINKS = ['auto', 'netns', 'proxy'] as const;
type Phase = (typeof PHASES)[number];

const USAGE = `Usage: npm run bench -- [options]

Benchmarks Hotline as production starts it (node dist/main.js), measured from other processes: the
callers', the scripted model's and the floor's (outside: first-speak, barge-in and memory per idle
call, the headline figures); then Hotline on a thread of its own against a scripted OpenAI-compatible
LLM server, with callers driving calls over real WebSockets (and HTTP for the webhook) on 127.0.0.1,
and prints a table of first-speak overhead, barge-in latency, capacity, webhook throughput, the store's
figures on SQLite and PostgreSQL, the talking calls held with WORKERS=1 and WORKERS=2 (Hotline
built and started as a process, node dist/main.js), what a caller pays when the model and a
business system are across a network, over TLS (network), the business's documents indexed and
searched on both stores, with first-speak overhead with the knowledge base off and on (knowledge), and
first-speak overhead with a language per call, its detection and pronunciations off and on (languages).
A full run takes about 25 minutes on 2 cores, --quick about 7; the run gives up after 40 minutes (exit 3).

Run:
  --quick                   a short smoke run: the defaults in [brackets] below
  --only <phases>           comma-separated, of outside, features, first-speak, barge-in, capacity, webhook, store,
                            workers, network, knowledge, languages (default: all)
  --out <file>              also write the figures as JSON to this file
  --llm-thread              run the LLM server on a thread of its own (default: the callers' thread; the workers
                            phase always gives it one, ahead of Hotline's priority: see bench/workers.ts)
  --same-priority           the callers and the LLM server keep Hotline's CPU priority
                            (default: they drop to the lowest, standing in for other hosts)
  --seed <n>                seed of the random timings (default 1)
  --tracing                 the bench's main Hotline traces every call with OpenTelemetry, exported over OTLP/HTTP
                            to a receiver on the callers' thread that discards it (the store, workers and network
                            phases start their own Hotline, untraced; default off)

The LLM server and the callers:
  --ttft-ms <ms>            time to the first token (default 300)
  --tokens-per-second <n>   token rate after it (default 60)
  --think-ms <ms>           callers wait 0 to twice this between turns (default 500)
  --ms-per-char <ms>        playback time of Hotline's speech per character (default 5)

Phases:
  --outside-calls <n,n,...> outside: calls talking at once, one level each, Hotline then the floor
                            (default 1,100,250,1000 [1,50])
  --outside-barge-ins <n>   outside: interruptions over --barge-in-calls calls, after 100 over 10 (default 2000 [300])
  --features <names>        features: comma-separated, of ${FEATURES.join(', ')}
                            (default: all)
  --feature-calls <n>       features: calls talking at once on each side (default 20 [10])
  --feature-turns <n>       features: turns per call and round (default 3 [2]), in 2 rounds a side [1]
  --calls <n,n,...>         first-speak: calls talking at once, one level each (default 1,100,1000 [1,50])
  --turns <n>               first-speak: turns per call (default 12 for 1 call, 4 up to 200, else 2 [2, else 1])
  --barge-ins <n>           barge-in: interruptions (default 10000 [300])
  --barge-in-calls <n>      barge-in: calls interrupting in parallel (default 200 [100])
  --idle-calls <n>          capacity, outside: greeted idle calls for the memory figure (default 2000 [300])
  --target-talking <n>      capacity: calls talking among the idle ones (default 200 [30])
  --event-loop-calls <n>    capacity: calls talking while the event-loop delay is measured (default 500 [100])
  --ladder-budget-s <s>     capacity: time for the ladder of talking calls (default 90 [6])
  --webhook-seconds <s>     webhook: how long to drive it (default 5 [1])
  --store-calls <n>         store: calls handed to the call writer per run (default 2000 [300])
  --postgres <admin url>    store, workers, knowledge: the PostgreSQL server to create a database on for each run, dropped after;
                            a server that does not answer skips PostgreSQL (default ${DEFAULT_POSTGRES_ADMIN_URL})
  --workers <n,n,...>       workers: the WORKERS values to run, the ratio taken to the first's (default 1,2)
  --workers-budget-s <s>    workers: time for each WORKERS value's ladder of talking calls (default 100 [20])
  --dashboard-calls <n>     store this many ended calls first and keep the dashboard busy while the phases
                            run: its live view open, a history page every 250 ms (default 0: no dashboard)
  --rtt <ms>                network: the round trip to the model and the business system (default 50)
  --gap <ms>|<min>-<max>    network: the caller's pause before each turn, fixed or uniform in a range, e.g.
                            5000-15000 (default 8000)
  --network-calls <n>       network: calls in parallel (default 10 [4])
  --network-turns <n>       network: turns per call (default 4 [3])
  --link <how>              network: netns (a network namespace, veth and netem: needs root and the kernel's
                            netem), proxy (a delaying TCP proxy), or auto: netns where it can be made (default auto)
  --server-idle-s <s>       network: how long the model and business system keep an idle connection open
                            (default 400, Cloudflare's documented HTTP/1.1 keep-alive)
  --keep-alive-hint         network: and say so in a Keep-Alive: timeout header, as Node's servers do (default:
                            no header, as Cloudflare's front sends none; a client's own idle limit decides)
  --knowledge-passages <n,n,...>
                            knowledge: the folders' sizes in passages, each indexed and searched on each store
                            (default 1000,10000,100000 [1000,10000]); first-speak runs on 10000
  --knowledge-questions <n> knowledge: searches timed per folder and store (default 300 [100])

Environment:
  HOTLINE_BENCH_CPU_PROFILE_DIR=<dir>   each Hotline process the bench starts writes a CPU profile there as it
                                        exits (summarise one with npx tsx bench/profile-summary.ts <file>)

Example:
  npm run bench -- --quick --only first-speak,barge-in --out bench.json`;

const BENCH = command({
  name: 'bench',
  usage: USAGE,
  allowPositionals: false,
  options: {
    quick: { type: 'boolean', default: false },
    'llm-thread': { type: 'boolean', default: false },
    'same-priority': { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
    'ttft-ms': { type: 'string' },
    'tokens-per-second': { type: 'string' },
    calls: { type: 'string' },
    'outside-calls': { type: 'string' },
    'outside-barge-ins': { type: 'string' },
    features: { type: 'string' },
    'feature-calls': { type: 'string' },
    'feature-turns': { type: 'string' },
    turns: { type: 'string' },
    'think-ms': { type: 'string' },
    'ms-per-char': { type: 'string' },
    'barge-ins': { type: 'string' },
    'barge-in-calls': { type: 'string' },
    'idle-calls': { type: 'string' },
    'target-talking': { type: 'string' },
    'event-loop-calls': { type: 'string' },
    'ladder-budget-s': { type: 'string' },
    'webhook-seconds': { type: 'string' },
    'store-calls': { type: 'string' },
    postgres: { type: 'string' },
    'dashboard-calls': { type: 'string' },
    workers: { type: 'string' },
    'workers-budget-s': { type: 'string' },
    rtt: { type: 'string' },
    gap: { type: 'string' },
    'network-calls': { type: 'string' },
    'network-turns': { type: 'string' },
    link: { type: 'string' },
    'server-idle-s': { type: 'string' },
    'keep-alive-hint': { type: 'boolean', default: false },
    'knowledge-passages': { type: 'string' },
    'knowledge-questions': { type: 'string' },
    tracing: { type: 'boolean', default: false },
    seed: { type: 'string' },
  },
});

type BenchValues = CommandLine<typeof BENCH.options, false>['values'];
type ValueFlag = Exclude<
  keyof BenchValues,
  | 'quick'
  | 'llm-thread'
  | 'same-priority'
  | 'help'
  | 'postgres'
  | 'gap'
  | 'link'
  | 'keep-alive-hint'
  | 'tracing'
  | 'knowledge-passages'
  | 'outside-calls'
  | 'features'
>;

/** Every setting of the run, checked before anything starts; throws UsageError. */
function benchSettings(values: BenchValues) {
  const quick = values.quick;
  const number = (flag: ValueFlag, full: number, small = full): number => numberOption(`--${flag}`, values[flag], quick ? small : full);
  const count = (flag: ValueFlag, full: number, small = full): number =>
    numberOption(`--${flag}`, values[flag], quick ? small : full, { integer: true });
  const turns = values.turns === undefined ? undefined : count('turns', 0);
  const tokensPerSecond = numberOption('--tokens-per-second', values['tokens-per-second'], 60, { aboveMin: true });
  return {
    quick,
    phases: phasesFrom(values.only),
    levels: levelsFrom('--calls', values.calls ?? (quick ? '1,50' : '1,100,1000')),
    outsideLevels: levelsFrom('--outside-calls', values['outside-calls'] ?? (quick ? '1,50' : '1,100,250,1000')),
    outsideBargeIns: count('outside-barge-ins', 2000, 300),
    features: featuresFrom(values.features),
    featureCalls: count('feature-calls', 20, 10),
    featureTurns: count('feature-turns', 3, 2),
    featureRounds: quick ? 1 : 2,
    // Few turns at high counts keep the run in budget; one call needs more turns for a stable median.
    turnsFor: (calls: number): number => turns ?? (quick ? (calls === 1 ? 2 : 1) : calls === 1 ? 12 : calls <= 200 ? 4 : 2),
    ttftMs: number('ttft-ms', 300),
    tokensPerSecond,
    tokenDelayMs: 1000 / tokensPerSecond,
    thinkMs: number('think-ms', 500),
    msPerChar: number('ms-per-char', 5),
    seed: number('seed', 1),
    bargeIns: count('barge-ins', 10_000, 300),
    bargeInCalls: count('barge-in-calls', 200, 100),
    idleCalls: count('idle-calls', 2000, 300),
    targetTalking: count('target-talking', 200, 30),
    eventLoopCalls: count('event-loop-calls', 500, 100),
    ladderBudgetS: number('ladder-budget-s', 90, 6),
    webhookSeconds: number('webhook-seconds', 5, 1),
    storeCalls: count('store-calls', 2000, 300),
    postgresAdminUrl: postgresUrlFrom(values.postgres),
    dashboardCalls: count('dashboard-calls', 0),
    workerCounts: levelsFrom('--workers', values.workers ?? '1,2'),
    workersBudgetS: number('workers-budget-s', 100, 20),
    rttMs: number('rtt', 50),
    gapMs: gapFrom(values.gap),
    networkCalls: count('network-calls', 10, 4),
    networkTurns: count('network-turns', 4, 3),
    link: linkFrom(values.link),
    serverIdleS: number('server-idle-s', 400),
    keepAliveHint: values['keep-alive-hint'],
    knowledgePassages: levelsFrom('--knowledge-passages', values['knowledge-passages'] ?? (quick ? '1000,10000' : '1000,10000,100000')),
    knowledgeQuestions: count('knowledge-questions', 300, 100),
    llmThread: values['llm-thread'],
    samePriority: values['same-priority'],
    tracing: values.tracing,
    out: values.out,
  };
}

function phasesFrom(only: string | undefined): Set<Phase> {
  const phases = new Set<Phase>();
  for (const name of (only ?? PHASES.join(',')).split(',').map((s) => s.trim())) {
    if (!(PHASES as readonly string[]).includes(name)) throw new UsageError(`--only: unknown phase "${name}"; choose from ${PHASES.join(', ')}`);
    phases.add(name as Phase);
  }
  return phases;
}

function featuresFrom(names: string | undefined): FeatureName[] {
  if (names === undefined) return [...FEATURES];
  return names.split(',').map((name) => {
    const trimmed = name.trim();
    if (!(FEATURES as readonly string[]).includes(trimmed)) throw new UsageError(`--features: unknown feature "${trimmed}"; choose from ${FEATURES.join(', ')}`);
    return trimmed as FeatureName;
  });
}

/** "8000" or "5000-15000" (ms). */
function gapFrom(value: string | undefined): { min: number; max: number } {
  if (value === undefined) return { min: 8000, max: 8000 };
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?)\s*)?$/.exec(value);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  if (!match || !(max >= min)) throw new UsageError(`--gap: "${value}" is not a pause in ms (8000) or a range (5000-15000)`);
  return { min, max };
}

function linkFrom(value: string | undefined): LinkKind | 'auto' {
  if (value === undefined) return 'auto';
  if (!(LINKS as readonly string[]).includes(value)) throw new UsageError(`--link: "${value}" is not one of ${LINKS.join(', ')}`);
  return value as LinkKind | 'auto';
}

function postgresUrlFrom(value: string | undefined): string {
  if (value === undefined) return DEFAULT_POSTGRES_ADMIN_URL;
  if (!/^postgres(ql)?:\/\/./.test(value)) throw new UsageError(`--postgres: "${value}" is not a PostgreSQL URL, e.g. ${DEFAULT_POSTGRES_ADMIN_URL}`);
  return value;
}

function levelsFrom(flag: string, counts: string): number[] {
  try {
    return parseCounts(counts);
  } catch (error) {
    throw new UsageError(`${flag}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

// Before anything starts: --help and bad usage end the process here.
const {
  quick,
  phases,
  levels,
  outsideLevels,
  outsideBargeIns,
  features,
  featureCalls,
  featureTurns,
  featureRounds,
  turnsFor,
  ttftMs,
  tokensPerSecond,
  tokenDelayMs,
  thinkMs,
  msPerChar,
  seed,
  bargeIns,
  bargeInCalls,
  idleCalls,
  targetTalking,
  eventLoopCalls,
  ladderBudgetS,
  webhookSeconds,
  storeCalls,
  postgresAdminUrl,
  dashboardCalls,
  workerCounts,
  workersBudgetS,
  rttMs,
  gapMs,
  networkCalls,
  networkTurns,
  link,
  serverIdleS,
  keepAliveHint,
  knowledgePassages,
  knowledgeQuestions,
  llmThread,
  samePriority,
  tracing,
  out,
} = commandLineOrExit(BENCH, process.argv.slice(2), ({ values }) => benchSettings(values));
endQuietlyWhenOutputCloses();
const openPerSecond = 400;
const turnTimeoutMs = 60_000;

// However the machine behaves, the run ends.
setTimeout(() => {
  console.error('bench: still running after 40 minutes; giving up');
  process.exit(3);
}, 40 * 60_000).unref();

const progress = (message: string): void => {
  process.stderr.write(`[${((now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);
};

const startedAt = now();
const startedIso = new Date().toISOString();
const talk = { openPerSecond, thinkMs, msPerChar, seed, turnTimeoutMs };
/** The ladder of talking calls, as the capacity and workers phases climb it. */
const ladder: Omit<LadderOptions, 'ladderBudgetS'> = {
  openPerSecond: quick ? 1000 : 500,
  talk: { ...talk, turns: quick ? 1 : 3 },
  ladderStart: quick ? 50 : 100,
  ladderLimitMs: 10,
};
const storeOptions: StoreBenchOptions = {
  postgresAdminUrl,
  writerCalls: storeCalls,
  levels: [1, 100],
  turnsFor,
  // A fresh Hotline per store, warmed up as the main one is: its figures compare with section 1's.
  warmUp: { calls: quick ? 20 : 50, turns: quick ? 5 : 10 },
  talk,
  fixture: { ttftMs, tokenDelayMs, llmThread, yieldCpu: !samePriority },
  progress,
};

let firstSpeak: FirstSpeakLevel[] | undefined;
let bargeIn: BargeInResult | undefined;
let bargeInLowLoad: BargeInResult | undefined;
let capacity: CapacityResult | undefined;
let webhook: WebhookResult | undefined;
let dashboard: BenchResults['dashboard'];
let viewer: DashboardViewer | undefined;
let store: StoreBenchResult | undefined;
let fixture: BenchFixture | undefined;
let workers: WorkersResult | undefined;
let outside: OutsideResult | undefined;
let featureCosts: FeaturesResult | undefined;
let network: NetworkResult | undefined;
let otlpSink: OtlpSink | undefined;
let knowledge: KnowledgeBenchResult | undefined;
let languages: LanguagesBenchResult | undefined;

// First, while no Hotline thread runs and this thread has not given way to one: the writer's figures,
// the knowledge base's indexing and searches, and the languages' pieces timed alone (this thread
// stands for Hotline's own there).
const writerFigures = phases.has('store') ? await measureWriters(storeOptions) : undefined;
const knowledgeFolders = phases.has('knowledge') ? await KnowledgeFolders.write(knowledgePassages, seed, progress) : undefined;
if (knowledgeFolders) {
  knowledge = await measureKnowledgeRetrieval(
    { postgresAdminUrl, sizes: knowledgePassages, questions: knowledgeQuestions, warmUpQuestions: quick ? 20 : 50, seed, progress },
    knowledgeFolders,
  );
}
const languagePrompts = phases.has('languages') ? await LanguagePrompts.write() : undefined;
if (languagePrompts) {
  progress('languages: timing detectLanguage, a call hearing its caller and a pronouncer alone');
  languages = { note: LANGUAGES_NOTE, pronunciations: pronunciationsFigures(), micro: await measureLanguageCosts(quick ? 100 : 300, languagePrompts.on) };
}

if ([...phases].some((phase) => !OWN_HOTLINE.includes(phase)) || dashboardCalls > 0) {
  if (dashboardCalls > 0) progress(`dashboard: storing ${dashboardCalls} calls`);
  otlpSink = tracing ? await startOtlpSink() : undefined;
  fixture = await BenchFixture.start({
    ttftMs,
    tokenDelayMs,
    llmThread,
    yieldCpu: !samePriority,
    storedCalls: dashboardCalls,
    // The floor of first-speak overhead (raw-reader.ts), measured beside Hotline in the same run.
    floor: phases.has('first-speak'),
    ...(otlpSink ? { env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlpSink.endpoint } } : {}),
  });
  await runMainPhases(fixture);
  if (otlpSink) {
    // Received at all: a run "with tracing" that exported nothing would measure nothing.
    progress(`tracing: ${otlpSink.exports} exports, ${(otlpSink.bytes / 1e6).toFixed(1)} MB of spans received and discarded`);
    await otlpSink.close();
  }
}
if (writerFigures) store = await measureFirstSpeakOnStores(storeOptions, writerFigures);
if (knowledge && knowledgeFolders) {
  try {
    knowledge.firstSpeak = await measureFirstSpeakWithKnowledge(
      { levels: [1, 100], turnsFor, warmUp: storeOptions.warmUp, talk, fixture: storeOptions.fixture, progress },
      await knowledgeFolders.of(STALL_AIM_PASSAGES, seed),
      seed,
    );
  } finally {
    await knowledgeFolders.remove();
  }
}
if (languages && languagePrompts) {
  try {
    // Each side twice the turns of the knowledge phase's, in rounds taken in turn with the other side's.
    const rounds = quick ? 2 : 4;
    languages.firstSpeak = await measureFirstSpeakWithLanguages(
      {
        levels: [1, 100],
        turnsFor: (calls) => Math.max(1, Math.round((turnsFor(calls) * 2) / rounds)),
        rounds,
        warmUp: storeOptions.warmUp,
        talk,
        fixture: storeOptions.fixture,
        progress,
      },
      languagePrompts,
    );
  } finally {
    await languagePrompts.remove();
  }
}
// These build dist/ and start Hotline as processes of their own, apart from every phase above.
if (phases.has('outside')) {
  const low = { calls: quick ? 3 : 10, trialsPerCall: quick ? 3 : 10 };
  outside = await measureOutside({
    levels: outsideLevels,
    turnsFor,
    talk,
    warmUp: storeOptions.warmUp,
    bargeIns: { low, high: { calls: bargeInCalls, trialsPerCall: Math.max(1, Math.round(outsideBargeIns / bargeInCalls)) } },
    tokenDelayMs,
    idleCalls,
    fixture: { ttftMs, tokenDelayMs, yieldCpu: !samePriority },
    progress,
  });
}
if (phases.has('features')) {
  featureCosts = await measureFeatures({
    features,
    calls: featureCalls,
    turns: featureTurns,
    rounds: featureRounds,
    talk,
    warmUp: storeOptions.warmUp,
    postgresAdminUrl,
    fixture: { ttftMs, tokenDelayMs, yieldCpu: !samePriority },
    progress,
  });
}
if (phases.has('workers')) {
  workers = await measureWorkers({
    workers: workerCounts,
    postgresAdminUrl,
    // Refined: the doubling alone would give a ratio of 1, 2 or 4.
    ladder: { ...ladder, ladderBudgetS: workersBudgetS, ladderRefine: quick ? 1 : 3 },
    warmUp: storeOptions.warmUp,
    seed,
    fixture: storeOptions.fixture,
    progress,
  });
}
if (phases.has('network')) {
  network = await measureNetwork({
    rttMs,
    gapMs,
    calls: networkCalls,
    turns: networkTurns,
    ttftMs,
    tokenDelayMs,
    msPerChar,
    seed,
    link,
    serverKeepAliveMs: serverIdleS * 1000,
    keepAliveHint,
    progress,
  });
}

/** The phases on the bench's main Hotline (all but the store's). */
async function runMainPhases(fixture: BenchFixture): Promise<void> {
  try {
    const capacityOptions: CapacityOptions = { ...ladder, idleCalls, targetTalking, eventLoopCalls, ladderBudgetS };

    if (phases.has('capacity')) {
      // Memory first, on a heap the other phases have not grown yet.
      progress(`capacity: opening ${idleCalls} idle calls for the memory measurement`);
      const { memory, idle } = await measureMemory(fixture, capacityOptions);
      try {
        progress('warming up');
        await warmUp(fixture, { calls: quick ? 20 : 50, turns: quick ? 5 : 10, seed });
        progress(`capacity: ${targetTalking} calls talking among ${idleCalls} open`);
        const target = await measureTarget(fixture, idle, capacityOptions);
        capacity = { memory, target: target.level, targetOpen: target.open, eventLoop: undefined, ladder: [], maxTalkingUnderLimit: 0, ladderStop: 'not run' };
      } finally {
        await idle.close();
      }
    } else {
      progress('warming up');
      await warmUp(fixture, { calls: quick ? 20 : 50, turns: quick ? 5 : 10, seed });
    }

    let idleDashboard: DashboardResult | undefined;
    if (dashboardCalls > 0) {
      progress('dashboard: history pages with no call running');
      idleDashboard = await DashboardViewer.measureIdle(fixture.hotline.url, dashboardCalls, 40);
      progress('dashboard: the live view open and a history page every 250 ms from now on');
      viewer = await DashboardViewer.start(fixture.hotline.url, dashboardCalls);
    }

    if (phases.has('first-speak')) {
      firstSpeak = [];
      for (const calls of levels) {
        progress(`first-speak: ${calls} calls × ${turnsFor(calls)} turns`);
        const options = { ...talk, calls, turns: turnsFor(calls), idPrefix: `fs${calls}` };
        const level = await measureLevel(fixture, options);
        if (fixture.floor) {
          progress(`first-speak: the floor, ${calls} calls × ${turnsFor(calls)} turns`);
          level.floor = await measureLevel(fixture, { ...options, idPrefix: `fs${calls}-floor` }, fixture.floor);
        }
        firstSpeak.push(level);
      }
    }

    if (phases.has('barge-in')) {
      // The same at low load first: the floor of the abort latency, for comparison.
      const lowCalls = quick ? 3 : 10;
      const lowPerCall = quick ? 3 : 10;
      progress(`barge-in: ${lowCalls * lowPerCall} interruptions over ${lowCalls} calls`);
      bargeInLowLoad = await runBargeIns(fixture, {
        trials: lowCalls * lowPerCall,
        calls: lowCalls,
        trialsPerCall: lowPerCall,
        openPerSecond,
        msPerChar,
        tokenDelayMs,
        seed,
        idPrefix: 'barge-low',
      });
      progress(`barge-in: ${bargeIns} interruptions over ${bargeInCalls} calls`);
      bargeIn = await runBargeIns(fixture, {
        trials: bargeIns,
        calls: bargeInCalls,
        trialsPerCall: 10,
        openPerSecond,
        msPerChar,
        tokenDelayMs,
        seed,
        idPrefix: 'barge',
      });
    }

    if (viewer && idleDashboard) {
      dashboard = { idle: idleDashboard, underLoad: await viewer.stop() };
      viewer = undefined;
    }

    if (capacity) {
      progress(`capacity: event-loop delay with ${eventLoopCalls} calls talking`);
      capacity.eventLoop = await measureEventLoop(fixture, capacityOptions);
      progress('capacity: talking calls ladder');
      Object.assign(capacity, await climbLadder(fixture, capacityOptions));
    }

    if (phases.has('webhook')) {
      progress('webhook');
      webhook = await runWebhook(fixture, {
        loops: 16,
        durationMs: webhookSeconds * 1000,
        sessions: quick ? 4 : 20,
        turns: quick ? 2 : 5,
        msPerChar: 2,
        thinkMs: 200,
        seed,
      });
    }
  } finally {
    await viewer?.stop();
    await fixture.close();
  }
}

const partial: Omit<BenchResults, 'targets'> = {
  machine: machine(),
  options: {
    quick,
    only: [...phases].join(','),
    llmThread,
    // The callers' (and LLM server's) CPU priority as a nice value: 19 when they gave way to Hotline.
    callersNice: fixture?.callersNice ?? store?.callersNice ?? workers?.callersNice ?? knowledge?.firstSpeak?.callersNice ?? languages?.firstSpeak?.callersNice ?? 'same',
    ttftMs,
    tokensPerSecond,
    tokenDelayMs: Number(tokenDelayMs.toFixed(2)),
    thinkMs,
    msPerChar,
    calls: levels.join(','),
    outsideCalls: outsideLevels.join(','),
    outsideBargeIns,
    features: features.join(','),
    featureCalls,
    featureTurns,
    seed,
    bargeIns,
    bargeInCalls,
    idleCalls,
    targetTalking,
    eventLoopCalls,
    ladderBudgetS,
    webhookSeconds,
    storeCalls,
    postgres: describePostgresUrl(postgresAdminUrl),
    dashboardCalls,
    workers: workerCounts.join(','),
    workersBudgetS,
    rttMs,
    gap: gapMs.min === gapMs.max ? String(gapMs.min) : `${gapMs.min}-${gapMs.max}`,
    networkCalls,
    networkTurns,
    link,
    serverIdleS,
    keepAliveHint,
    knowledgePassages: knowledgePassages.join(','),
    knowledgeQuestions,
    tracing,
  },
  startedAt: startedIso,
  durationS: (now() - startedAt) / 1000,
  ...(firstSpeak ? { firstSpeak: { note: firstSpeakNote(fixture?.callersNice), levels: firstSpeak } } : {}),
  ...(bargeIn ? { bargeIn } : {}),
  ...(bargeInLowLoad ? { bargeInLowLoad } : {}),
  ...(capacity ? { capacity } : {}),
  ...(webhook ? { webhook } : {}),
  ...(dashboard ? { dashboard } : {}),
  ...(store ? { store } : {}),
  ...(workers ? { workers } : {}),
  ...(outside ? { outside } : {}),
  ...(featureCosts ? { features: featureCosts } : {}),
  ...(network ? { network } : {}),
  ...(knowledge ? { knowledge } : {}),
  ...(languages ? { languages } : {}),
};
const results: BenchResults = { ...partial, targets: evaluateTargets(partial) };
// The file first: a reader that stops early (`| head`) ends the run as soon as the table is printed.
if (out) await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(render(results));
if (out) console.log(`\nJSON written to ${out}`);
