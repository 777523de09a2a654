/**
 * The features phase (issue 40): what each feature costs a turn, off against on, in one run. For
 * each feature two Hotlines are started as production starts them (node dist/main.js, the shipped
 * prompts), alike but for that feature, each against a scripted model in a process of its own,
 * and talked to in rounds taken in turn (off, on, on, off, …) so that a drift of the machine falls
 * on both. Per side: the CPU time of Hotline's process per turn, the bytes its V8 heap allocated
 * per turn and per streamed token (what its heap grew by plus what each collection freed), and
 * first-speak overhead (token written → speak left Hotline) p50 and p99.
 *
 * What "off" is, where a feature cannot be turned off: the live view's calls are always tracked,
 * so off is nobody watching and on is a viewer with the live stream open; the record is always
 * written as the call goes, so off is a store in memory and on is the file on disk; replicas need
 * PostgreSQL, so both sides run on it and on adds CLUSTER_SECRET (each reply recorded once played,
 * the live relay, the webhook calls' owners).
 */
import { availableParallelism } from 'node:os';
import { DashboardViewer, DASHBOARD_TOKEN } from './dashboard-load.js';
import { analyzeReplies, runTalkingCalls } from './first-speak.js';
import { roundOrder } from './languages.js';
import type { BenchFixture, ReplyInfo } from './llm-fixture.js';
import { startOtlpSink, type OtlpSink } from './otlp-sink.js';
import { prepareProduct, startProductionFixture, type ProductionPhaseOptions } from './production-fixture.js';
import type { Summary } from './stats.js';
import { postgresPlaces, type StorePlace } from './store-bench.js';
import { warmUp } from './warm-up.js';

export const FEATURES = ['tracing', 'redaction', 'live-view', 'record-on-disk', 'replicas', 'knowledge', 'languages'] as const;
export type FeatureName = (typeof FEATURES)[number];

/** Everything the features measured here leave off, over the fixture's environment: each side turns on at most one. */
const ALL_OFF: Readonly<Record<string, string>> = {
  ADMIN_TOKEN: DASHBOARD_TOKEN,
  REDACT_CARDS: 'false',
  REDACT_IBANS: 'false',
  KNOWLEDGE: 'false',
  LANGUAGES: 'false',
  CONFIGURE_TRANSCRIPTION: 'false',
  DATABASE_FILE: ':memory:',
};

/** A cluster secret for the replicas' side: long enough for Hotline's own check, used nowhere else. */
const BENCH_CLUSTER_SECRET = 'bench-cluster-secret-0123456789abcdef';

interface FeatureSetup {
  off: Record<string, string>;
  on: Record<string, string>;
  /** Opened beside the 'on' Hotline for as long as it is measured (the live view's viewer). */
  beside?: (url: string) => Promise<{ close(): Promise<unknown> }>;
  /** Undone once both sides are closed. */
  remove?: () => Promise<void>;
}

export interface FeaturesOptions extends ProductionPhaseOptions {
  features: readonly FeatureName[];
  calls: number;
  turns: number;
  rounds: number;
  postgresAdminUrl: string;
}

export interface FeatureSide {
  turns: number;
  tokens: number;
  timedOut: number;
  cpuMsPerTurn: number;
  bytesPerTurn: number;
  bytesPerToken: number;
  overheadMs: Summary;
  gcPauseMaxMs: number | undefined;
}

export interface FeatureFigures {
  feature: FeatureName;
  what: string;
  off: FeatureSide;
  on: FeatureSide;
}

export interface FeaturesResult {
  note: string;
  calls: number;
  turnsPerRound: number;
  rounds: number;
  features: FeatureFigures[];
  /** Features not measured, and why (no PostgreSQL for the replicas). */
  skipped: { feature: FeatureName; why: string }[];
}

const WHAT: Record<FeatureName, string> = {
  tracing: 'OpenTelemetry spans of every turn, exported over OTLP/HTTP to a receiver that discards them',
  redaction: 'card numbers and IBANs redacted from both sides of the call as it goes',
  'live-view': 'a dashboard viewer with the live stream open',
  'record-on-disk': "the call's record written to the SQLite file as it goes (off: a store in memory)",
  replicas: 'CLUSTER_SECRET on PostgreSQL: each reply recorded once played, the live relay, the owners (both sides on PostgreSQL)',
  knowledge: "the shipped prompts' knowledge folder looked up at every turn",
  languages: "the shipped prompts' languages: each utterance's language detected, the recogniser configured",
};

export const FEATURES_NOTE =
  'Two Hotlines per feature as production starts them (node dist/main.js, the shipped prompts, NODE_ENV=production), ' +
  'alike but for that feature, each against the scripted model in a process of its own, talked to in rounds taken in turn ' +
  `(off, on, on, off, …) by callers in the bench's process, on the same ${availableParallelism()} cores. CPU = Hotline's process, ` +
  'user and system; bytes = allocated on its V8 heap (its growth plus what each collection freed); tokens = the content tokens ' +
  'the model streamed; first-speak = completing token written → speak left Hotline.';

async function setupOf(feature: FeatureName, options: FeaturesOptions): Promise<FeatureSetup | { skipped: string }> {
  switch (feature) {
    case 'tracing': {
      const sink: OtlpSink = await startOtlpSink();
      return { off: {}, on: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint }, remove: () => sink.close() };
    }
    case 'redaction':
      return { off: {}, on: { REDACT_CARDS: 'true', REDACT_IBANS: 'true' } };
    case 'live-view':
      return { off: {}, on: {}, beside: (url) => DashboardViewer.watchLive(url).then((viewer) => ({ close: () => viewer.stop() })) };
    case 'record-on-disk':
      // In the folder the process runs in, its own and removed with it.
      return { off: {}, on: { DATABASE_FILE: 'hotline.db' } };
    case 'replicas': {
      const make = await postgresPlaces(options.postgresAdminUrl);
      if (typeof make !== 'function') return { skipped: make.skipped };
      const places: StorePlace[] = [await make(), await make()];
      const [off, on] = places as [StorePlace, StorePlace];
      return {
        off: off.env,
        on: { ...on.env, CLUSTER_SECRET: BENCH_CLUSTER_SECRET, REPLICA_ID: 'bench-on' },
        remove: async () => {
          for (const place of places) await place.remove();
        },
      };
    }
    case 'knowledge':
      return { off: {}, on: { KNOWLEDGE: 'true' } };
    case 'languages':
      return { off: {}, on: { LANGUAGES: 'true', CONFIGURE_TRANSCRIPTION: 'true' } };
  }
}

interface Kept {
  turns: number;
  tokens: number;
  timedOut: number;
  cpuMs: number;
  bytes: number;
  gcPauseMaxMs: number | undefined;
  replies: ReplyInfo[];
}

function sideOf(kept: Kept): FeatureSide {
  const analysis = analyzeReplies(kept.replies);
  return {
    turns: kept.turns,
    tokens: kept.tokens,
    timedOut: kept.timedOut,
    cpuMsPerTurn: kept.cpuMs / Math.max(1, kept.turns),
    bytesPerTurn: kept.bytes / Math.max(1, kept.turns),
    bytesPerToken: kept.bytes / Math.max(1, kept.tokens),
    overheadMs: analysis.overheadMs,
    gcPauseMaxMs: kept.gcPauseMaxMs,
  };
}

export async function measureFeatures(options: FeaturesOptions): Promise<FeaturesResult> {
  const { built } = options;
  await prepareProduct(options, 'features');
  const figures: FeatureFigures[] = [];
  const skipped: FeaturesResult['skipped'] = [];
  for (const feature of options.features) {
    const setup = await setupOf(feature, options);
    if ('skipped' in setup) {
      skipped.push({ feature, why: setup.skipped });
      continue;
    }
    const fixtures: BenchFixture[] = [];
    const beside: { close(): Promise<unknown> }[] = [];
    try {
      const start = async (which: 'off' | 'on'): Promise<BenchFixture> => {
        options.progress(`features: ${feature} ${which}, starting Hotline`);
        const fixture = await startProductionFixture({ fixture: options.fixture, env: { ...ALL_OFF, ...setup[which] }, floor: false, built });
        fixtures.push(fixture);
        return fixture;
      };
      const sides = { off: await start('off'), on: await start('on') };
      for (const which of ['off', 'on'] as const) {
        options.progress(`features: ${feature} ${which}, warming up`);
        await warmUp(sides[which], { ...options.warmUp, seed: options.talk.seed });
      }
      if (setup.beside) beside.push(await setup.beside(sides.on.hotline.url));
      const kept: Record<'off' | 'on', Kept> = {
        off: { turns: 0, tokens: 0, timedOut: 0, cpuMs: 0, bytes: 0, gcPauseMaxMs: undefined, replies: [] },
        on: { turns: 0, tokens: 0, timedOut: 0, cpuMs: 0, bytes: 0, gcPauseMaxMs: undefined, replies: [] },
      };
      for (const [index, which] of roundOrder(options.rounds).entries()) {
        const round = Math.floor(index / 2) + 1;
        options.progress(`features: ${feature} ${which}, round ${round} of ${options.rounds}: ${options.calls} calls × ${options.turns} turns`);
        const fixture = sides[which];
        const run = await runTalkingCalls(fixture, {
          ...options.talk,
          calls: options.calls,
          turns: options.turns,
          idPrefix: `features-${feature.replace(/\W+/g, '-')}-${which}-${round}`,
        });
        fixture.reset();
        const side = kept[which];
        side.turns += run.replies.length;
        side.tokens += run.replies.reduce((sum, reply) => sum + reply.tokens.length, 0);
        side.timedOut += run.timedOut;
        side.cpuMs += run.eventLoop.processCpuMs ?? Number.NaN;
        side.bytes += run.eventLoop.allocatedBytes ?? Number.NaN;
        side.gcPauseMaxMs = Math.max(side.gcPauseMaxMs ?? 0, run.eventLoop.gcPauseMaxMs ?? 0);
        side.replies.push(...run.replies);
      }
      figures.push({ feature, what: WHAT[feature], off: sideOf(kept.off), on: sideOf(kept.on) });
    } finally {
      for (const viewer of beside) await viewer.close();
      for (const fixture of fixtures) await fixture.close();
      await setup.remove?.();
    }
  }
  return { note: FEATURES_NOTE, calls: options.calls, turnsPerRound: options.turns, rounds: options.rounds, features: figures, skipped };
}
