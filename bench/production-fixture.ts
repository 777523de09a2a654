/**
 * Hotline as production starts it, against the scripted model in a process of its own, with the
 * callers in the bench's process: the outside and features phases' fixture. The model and the
 * callers stand in for other hosts, so both run ahead of Hotline (LLM_NICE_BELOW_HOTLINE): a token
 * is written, and a speak's arrival or a barge-in's sending is timed, when it happens, however busy
 * Hotline is. `close()` also gives the bench's thread back the priority it started with.
 */
import type { TalkOptions } from './first-speak.js';
import { buildHotline, HotlineProcess } from './hotline-process.js';
import { BenchFixture, type FixtureOptions } from './llm-fixture.js';
import { restoreNice, startingNice } from './priority.js';
import { LLM_NICE_BELOW_HOTLINE } from './workers.js';

/** What production sets that the bench's fixture does not: its mode and log, nothing of the bench's choosing beyond the model's address. */
export const PRODUCTION_ENV: Readonly<Record<string, string>> = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'info',
  // The scripted server answers the bench's replies only; a model list is not what is measured.
  LLM_CHECK_AT_START: 'false',
  SHUTDOWN_GRACE_MS: '2000',
};

/** The fixture's settings a phase passes on; the rest are this module's. */
export type PhaseFixtureOptions = Omit<FixtureOptions, 'launch' | 'apart' | 'floor' | 'llmThread' | 'env' | 'storedCalls'>;

/** What every phase measuring production Hotlines takes. */
export interface ProductionPhaseOptions {
  talk: Omit<TalkOptions, 'calls' | 'turns' | 'idPrefix'>;
  warmUp: { calls: number; turns: number };
  fixture: PhaseFixtureOptions;
  /** The compiled product's folder, laid out as src/ (a test's own build): given, nothing is built; default dist/, built first. */
  built?: string;
  progress: (message: string) => void;
}

/** Builds dist/ as `npm run build` does, unless the phase was given a build of its own. */
export async function prepareProduct(options: Pick<ProductionPhaseOptions, 'built' | 'progress'>, phase: string): Promise<void> {
  if (options.built !== undefined) return;
  options.progress(`${phase}: building dist/ (npm run build)`);
  await buildHotline();
}

export interface ProductionFixtureOptions {
  fixture: PhaseFixtureOptions;
  /** Over PRODUCTION_ENV. */
  env: Record<string, string>;
  /** The floor (raw-reader.ts) in a process of its own too. */
  floor: boolean;
  /** The compiled product's folder, laid out as src/; default dist/. */
  built: string | undefined;
}

export async function startProductionFixture(options: ProductionFixtureOptions): Promise<BenchFixture> {
  const hotlineNice = startingNice();
  const ahead = options.fixture.yieldCpu && hotlineNice !== undefined ? Math.max(-20, hotlineNice - LLM_NICE_BELOW_HOTLINE) : undefined;
  const { built } = options;
  let fixture: BenchFixture;
  try {
    fixture = await BenchFixture.start({
      ...options.fixture,
      llmThread: true,
      apart: true,
      floor: options.floor,
      ...(ahead === undefined ? {} : { llmNice: ahead, callersNice: ahead }),
      env: { ...PRODUCTION_ENV, ...options.env },
      launch: (env, nice) => HotlineProcess.start(env, { workers: 1, nice, ...(built === undefined ? {} : { built }) }),
    });
  } catch (error) {
    if (ahead !== undefined) restoreNice(hotlineNice);
    throw error;
  }
  const close = fixture.close.bind(fixture);
  // The phases after this one start from the priority the bench started with.
  fixture.close = async () => {
    try {
      await close();
    } finally {
      if (ahead !== undefined) restoreNice(hotlineNice);
    }
  };
  return fixture;
}
