/**
 * Runs Hotline's whole path many times on fast replies, talking and barging
 * in, so the measured runs see optimised code rather than the interpreter
 * and first-time compilation. Its figures are thrown away.
 */
import { runBargeIns } from './barge-in.js';
import { runTalkingCalls } from './first-speak.js';
import type { BenchFixture } from './llm-fixture.js';

/** `words`: what the callers say (TalkOptions.words), so the path warmed up is the one measured. */
export async function warmUp(
  fixture: BenchFixture,
  options: { calls: number; turns: number; seed: number; words?: ((tag: string) => string) | undefined },
): Promise<void> {
  fixture.fast = true;
  try {
    await runTalkingCalls(fixture, {
      calls: options.calls,
      turns: options.turns,
      openPerSecond: 1000,
      thinkMs: 5,
      msPerChar: 0.05,
      seed: options.seed + 7,
      turnTimeoutMs: 10_000,
      idPrefix: 'warmup',
      words: options.words,
    });
    if (fixture.floor) {
      await runTalkingCalls(
        fixture,
        { calls: options.calls, turns: options.turns, openPerSecond: 1000, thinkMs: 5, msPerChar: 0.05, seed: options.seed + 7, turnTimeoutMs: 10_000, idPrefix: 'warmup-floor' },
        fixture.floor,
      );
    }
    // Aborting a stream runs code nothing else does (undici's abort path, the turn's interruption).
    await runBargeIns(fixture, {
      trials: options.calls * options.turns,
      calls: options.calls,
      trialsPerCall: options.turns,
      openPerSecond: 1000,
      msPerChar: 0.05,
      tokenDelayMs: 1,
      seed: options.seed + 11,
      idPrefix: 'warmup-barge',
    });
  } finally {
    fixture.fast = false;
    fixture.reset();
  }
}
