/**
 * The bench's languages phase (bench/languages.ts) in a tiny configuration: the two prompts folders,
 * the detector and the pronouncer timed alone, and two Hotlines on threads of their own, one with a
 * language per call and pronunciations and one without, each talked to for one round of two calls,
 * the callers asking in English and every fourth turn in German; then the figures as the report
 * prints them. No timing is asserted: only that both sides were measured, that the pronunciations
 * rewrote what they should on the one side and nothing on the other, and that German words were
 * answered in German there.
 */
import { access, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  benchPronouncer,
  isGermanTurn,
  LANGUAGES_NOTE,
  LanguagePrompts,
  languageWords,
  measureFirstSpeakWithLanguages,
  measureLanguageCosts,
  pronunciationsFigures,
  roundOrder,
  SENTENCE_WITH_NAMES,
  SENTENCE_WITHOUT_NAMES,
  type LanguagesBenchResult,
  type LanguagesSide,
} from '../bench/languages.js';
import { evaluateTargets, machine, render, type BenchResults } from '../bench/report.js';
import { tagFor } from '../bench/replies.js';

let prompts: LanguagePrompts;

beforeAll(async () => {
  prompts = await LanguagePrompts.write();
});

afterAll(async () => {
  await prompts?.remove();
});

const exists = (file: string): Promise<boolean> => access(file).then(() => true, () => false);

describe("the languages phase's material", () => {
  it('writes the off folder without languages or pronunciations, the on folder with de/, tr/ and 40 pronunciations', async () => {
    const off = await readdir(prompts.off);
    expect(off).toContain('system.md');
    expect(off.filter((name) => ['de', 'tr', 'languages.yaml', 'pronunciations.yaml', 'knowledge'].includes(name))).toEqual([]);
    for (const file of ['system.md', 'de/system.md', 'tr/system.md', 'tr/greeting.md', 'languages.yaml', 'pronunciations.yaml']) {
      expect(await exists(path.join(prompts.on, file))).toBe(true);
    }
    const figures = pronunciationsFigures();
    expect(figures.entries).toBe(40);
    expect(figures.regexes).toBeGreaterThan(2);
    expect(figures.inReplies.length).toBeGreaterThan(3);
  });

  it('asks every fourth turn in German, the same words for the same reply', () => {
    const words = Array.from({ length: 16 }, (_, id) => languageWords(tagFor(id)));
    expect(words.filter((w) => w.startsWith('Frage '))).toHaveLength(4);
    expect(words.every((w, id) => w.includes(tagFor(id)) && w.startsWith('Frage ') === isGermanTurn(id))).toBe(true);
    expect(languageWords(tagFor(5))).toBe(languageWords(tagFor(5)));
  });

  it('takes the rounds in the order off, on, on, off', () => {
    expect(roundOrder(2)).toEqual(['off', 'on', 'on', 'off']);
  });

  it('times the detector, a call hearing its caller, and the pronouncer on 120-character sentences', async () => {
    expect([SENTENCE_WITH_NAMES.length, SENTENCE_WITHOUT_NAMES.length]).toEqual([120, 120]);
    expect(benchPronouncer().text(SENTENCE_WITH_NAMES)).not.toBe(SENTENCE_WITH_NAMES);
    expect(benchPronouncer().text(SENTENCE_WITHOUT_NAMES)).toBe(SENTENCE_WITHOUT_NAMES);
    // It checks that every timed switching call switched, and no staying one did.
    const micro = await measureLanguageCosts(5, prompts.on);
    expect(micro.detect.medianUs).toBeGreaterThan(0);
    expect(micro.heard.staying.medianUs).toBeGreaterThan(0);
    expect(micro.heard.switching.medianUs).toBeGreaterThan(0);
    expect(micro.pronounce.entries).toBe(40);
    expect(micro.pronounce.withNames.medianUs).toBeGreaterThan(0);
    expect(micro.pronounce.withoutNames.medianUs).toBeGreaterThan(0);
  }, 30_000);
});

describe('the languages phase', () => {
  it('measures both Hotlines, rewrites speaks on one only, switches German callers there, and is printed', async () => {
    const firstSpeak = await measureFirstSpeakWithLanguages(
      {
        levels: [2],
        turnsFor: () => 4,
        rounds: 1,
        warmUp: { calls: 1, turns: 2 },
        talk: { openPerSecond: 100, thinkMs: 10, msPerChar: 0.1, seed: 1, turnTimeoutMs: 20_000 },
        // The test's thread keeps its priority: other files run on it after this one.
        fixture: { ttftMs: 20, tokenDelayMs: 2, llmThread: false, yieldCpu: false },
        progress: () => undefined,
      },
      prompts,
    );
    expect(firstSpeak.detectionAsks).toBeGreaterThanOrEqual(1);
    const [level] = firstSpeak.levels;
    expect(level).toMatchObject({ calls: 2, turnsPerRound: 4 });
    const figures = (side: LanguagesSide): void => {
      expect(side.timedOut).toBe(0);
      expect(side.replies).toBe(8);
      expect(side.speaks).toBeGreaterThan(8);
      expect(side.overheadMs.count).toBe(side.speaks);
      expect(side.timeToFirstSpeak.llmRequestMs.count).toBe(8);
      expect(side.timeToFirstSpeak.llmRequestMs.p50).toBeGreaterThan(0);
      expect(side.rounds).toHaveLength(1);
      expect(side.speech.speaks).toBe(side.speaks);
      expect(side.speech.asExpected).toBe(side.speaks);
      expect(side.speech.germanWords).toBeGreaterThan(0);
    };
    figures(level!.off);
    figures(level!.on);
    // The same words turn for turn on both.
    expect(level!.on.speech.germanWords).toBe(level!.off.speech.germanWords);
    expect(level!.off.speech.rewritten).toBe(0);
    expect(level!.off.speech.answeredIn).toEqual({ en: 8 });
    expect(level!.on.speech.rewritten).toBeGreaterThan(0);
    expect(level!.on.speech.samples[0]?.said).not.toBe(level!.on.speech.samples[0]?.wrote);
    expect(level!.on.speech.answeredIn.de).toBe(level!.on.speech.germanWords);
    expect(level!.on.switched.replies).toBeGreaterThan(0);
    expect(level!.off.switched.replies).toBe(0);

    const languages: LanguagesBenchResult = { note: LANGUAGES_NOTE, pronunciations: pronunciationsFigures(), firstSpeak };
    const partial = { machine: machine(), options: {}, startedAt: '', durationS: 1, languages };
    const results: BenchResults = { ...partial, targets: evaluateTargets(partial) };
    const text = render(results);
    expect(text).toContain('11. Languages and pronunciations');
    expect(text).toContain('on − off');
    expect(text).toContain(`${level!.on.speech.asExpected} of ${level!.on.speech.speaks} speaks as the bench's pronouncer says them`);
    expect(text).toContain('written → said');
    expect(results.targets).toEqual([]);
  }, 120_000);
});
