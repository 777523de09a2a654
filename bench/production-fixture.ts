/**
 * Hotline as production starts it, against the scripted model in a process of its own, with the
 * callers in the bench's process: the outside and features phases' fixture. The model and the
 * callers stand in for other hosts, so both run ahead of Hotline (LLM_NICE_BELOW_HOTLINE): a token
 * is written, and a speak's arrival or a barge-in's sending is timed, when it happens, however busy
 * Hotline is. `close()` also gives the bench's thread back the priority it started with.
 */
import { HotlineProcess } from './hotline-process.js';
import { BenchFixture, type FixtureOptions } from './llm-fixture.js';
import { restoreNice, startingNice } from './priority.js';
import { LLM_NICE_BELOW_HOTLINE } from './workers.js';

export interface ProductionFixtureOptions {
  fixture: Omit<FixtureOptions, 'launch' | 'apart' | 'floor' | 'llmThread' | 'env' | 'storedCalls'>;
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
      env: options.env,
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
