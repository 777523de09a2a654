/** The parts of `npm run eval` that need no call: verdicts read, prompt lines found, intervals, the cut transcript, comparisons. */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { compareSuites } from '../src/evals/compare.js';
import { summarize, wilsonInterval } from '../src/evals/eval-summary.js';
import { HeardTranscript, type TranscriptLine } from '../src/evals/heard-transcript.js';
import { promptUse } from '../src/evals/prompt-lines.js';
import type { RunResult } from '../src/evals/run-eval.js';
import { runChecks } from '../src/evals/hard-checks.js';
import { parseEval } from '../src/evals/load-evals.js';
import { callerMessages } from '../src/evals/simulated-caller.js';
import type { CallSummary } from '../src/call/ports/call-summary.js';
import { readVerdict } from '../src/evals/verdict-text.js';
import { PromptStore } from '../src/prompts/prompt-store.js';
import { repoRoot } from './helpers/child-process.js';

describe('a judge\'s verdict', () => {
  it('is read from the tool\'s arguments, JSON in text, or a leading PASS / FAIL', () => {
    expect(readVerdict('{"pass": false, "reason": "it promised a refund"}')).toEqual({ pass: false, reason: 'it promised a refund' });
    expect(readVerdict('Here is my verdict: {"pass": true, "reason": "ok"}')).toEqual({ pass: true, reason: 'ok' });
    expect(readVerdict('FAIL: the agent never said goodbye')).toEqual({ pass: false, reason: 'the agent never said goodbye' });
    expect(readVerdict('**Pass** - polite throughout')).toEqual({ pass: true, reason: 'polite throughout' });
  });

  it('is nothing when the answer says neither', () => {
    expect(readVerdict('I think the agent did rather well overall.')).toBeUndefined();
    expect(readVerdict('{"verdict": "yes"}')).toBeUndefined();
  });

  it('in prose, is the word that is the verdict: a word that starts like one, or a denied or doubted PASS, is none', () => {
    const fails = [
      'Passing this would be wrong. FAIL: the agent promised a voucher.',
      'Passing this would be wrong. Fail: the agent promised a voucher.',
      'I would not PASS this. FAIL — the agent promised a voucher.',
      'The call does not pass. FAIL',
      'Does it PASS? No. FAIL: the agent promised a voucher.',
      'A PASS would be wrong here. FAIL: the agent promised a voucher.',
      'The agent was friendly and passed the order on, but promised a voucher.\n\nVerdict: FAIL',
      '**Verdict:** fail — the agent promised a voucher.',
      'FAIL: the agent promised a voucher; it would PASS only without that promise.',
      "It's not a PASS. The agent promised a voucher. FAIL.",
      '{"pass": "false", "reason": "the agent promised a voucher"}',
      'My verdict {"pass": false, "reason": "a voucher was promised"} — {"pass": false, "reason": "same"}',
    ];
    for (const answer of fails) expect(readVerdict(answer), answer).toMatchObject({ pass: false });
    expect(readVerdict('Passing this would be wrong. FAIL: the agent promised a voucher.')).toEqual({ pass: false, reason: 'the agent promised a voucher.' });
    const passes = [
      'PASS: the agent never mentioned a refund.',
      'pass',
      'Result: PASS — polite throughout, it would FAIL only on a refund promise.',
      'The agent never promised anything it could not keep, so it does not fail. PASS',
      '> **PASS**\nThe agent said goodbye.',
    ];
    for (const answer of passes) expect(readVerdict(answer), answer).toMatchObject({ pass: true });
  });

  it('is not graded, never passed, when it cannot be read for certain', () => {
    const unclear = [
      'Passing this would be wrong.',
      'Passing this call seems fine to me.',
      'The agent failed to say goodbye but passed the order number on.',
      'Would it PASS? Hard to say.',
      'I would not PASS this.',
      '{"pass": "maybe", "reason": "unclear"}',
      '{"pass": true, "reason": "polite"} {"pass": false, "reason": "a voucher"}',
    ];
    for (const answer of unclear) expect(readVerdict(answer), answer).toBeUndefined();
  });
});

describe('the prompt files an eval call used', () => {
  it('are the lines heard as the files say them, placeholders filled, SSML and markdown aside, or cut short', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-prompt-use-'));
    try {
      await cp(path.join(repoRoot, 'prompts'), dir, { recursive: true });
      await writeFile(path.join(dir, 'greeting.md'), 'Hello {{caller_name|there}}, welcome to <emphasis>Kettle World</emphasis>! How can I help?\n');
      const store = await PromptStore.open(dir, pino({ level: 'silent' }));
      const use = (lines: TranscriptLine[]) =>
        promptUse({ prompts: store.current, promptFiles: store.status.files, fileTools: [], stubbed: new Set(), transcript: lines, toolRuns: [] }).used;
      expect(use([{ who: 'agent', text: 'Hello Max Bauer, welcome to Kettle World! How can I help?' }])).toEqual(['greeting.md']);
      expect(use([{ who: 'agent', text: "I'm sorry, nobody is", cut: true }])).toEqual(['transfer-failed.md']);
      // The model's own words, the caller's words, a cut of a single word: none is a prompt file's line.
      expect(use([{ who: 'agent', text: "I'm sorry, nobody is available to take your call right now, but I will help you." }])).toEqual([]);
      expect(use([{ who: 'caller', text: 'Are you still there? Take your time, I\'m listening.' }])).toEqual([]);
      expect(use([{ who: 'agent', text: 'Hello', cut: true }])).toEqual([]);
      expect(store.status.files).toContain('system.md');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the pass rate\'s interval', () => {
  it('is the Wilson interval: wide for few runs, never past 0 or 1', () => {
    const five = wilsonInterval(5, 5);
    expect(five.high).toBe(1);
    expect(five.low).toBeCloseTo(0.566, 3);
    const none = wilsonInterval(0, 5);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.434, 3);
    const half = wilsonInterval(50, 100);
    expect(half.low).toBeCloseTo(0.404, 3);
    expect(half.high).toBeCloseTo(0.596, 3);
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });
});

describe('the transcript as heard', () => {
  it('keeps only the words of a cut speech the caller heard, and drops one cut before its first word', () => {
    const transcript = new HeardTranscript();
    transcript.agentSpoke('Sure, I can check that for you.');
    transcript.agentCut('Sure, I can check that for you.', 3);
    transcript.callerSaid('Hold on.');
    transcript.agentSpoke('What is your number?');
    transcript.agentCut('What is your number?', 0);
    transcript.agentSpoke('Fine.');
    transcript.agentCut('Fine.', 5);
    expect(transcript.text()).toBe('Agent: Sure, I can — (the caller cut in)\nCaller: Hold on.\nAgent: Fine.');
  });

  it('is what the caller model reads: the agent as the user, itself as the assistant, a cut marked', () => {
    const transcript = new HeardTranscript();
    transcript.agentSpoke('Hello!');
    transcript.agentSpoke('How can I help?');
    transcript.callerSaid('My order.');
    transcript.callerPressed('4711#');
    const messages = callerMessages('You are Anna.', transcript.lines, true);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['system', expect.stringContaining('You are Anna.')],
      ['user', 'Hello! How can I help?'],
      ['assistant', 'My order. (presses 4711#)'],
      ['user', '(The agent says nothing.) (The agent is still talking. You cut in now: say what you interrupt with.)'],
    ]);
  });
});

describe("an eval's language", () => {
  const EVAL = 'name: in-language\ncaller: { persona: someone }\ncriteria: [the agent is polite]\n';

  it('is a language as its prompts folder is named, however it is written; anything else is named as no language', () => {
    expect(parseEval(`${EVAL}language: DE\n`, 'e.yaml').language).toBe('de');
    expect(parseEval(`${EVAL}language: pt_br\n`, 'e.yaml').language).toBe('pt-BR');
    expect(parseEval(EVAL, 'e.yaml').language).toBeUndefined();
    expect(() => parseEval(`${EVAL}language: German\n`, 'e.yaml')).toThrow(
      /e\.yaml:4: language: "German" is no language: write it as its prompts folder is named, e\.g\. de, tr, ar or pt-BR/,
    );
  });

  it('needs a language per call: an env that turns it off is an error at its line', () => {
    expect(() => parseEval(`${EVAL}language: de\nenv: { LANGUAGES: false, CONFIGURE_TRANSCRIPTION: "no" }\n`, 'e.yaml')).toThrow(
      /env\.LANGUAGES: LANGUAGES is on for a call with a language \(language: is given\): remove this setting, or the language\n.*env\.CONFIGURE_TRANSCRIPTION: CONFIGURE_TRANSCRIPTION is on/,
    );
    expect(parseEval(`${EVAL}env: { LANGUAGES: false }\n`, 'e.yaml').env).toEqual({ LANGUAGES: 'false' });
    // A language is a check of its own: an eval with nothing else to check is whole.
    expect(parseEval('name: only-language\ncaller: { persona: someone }\nlanguage: ar\n', 'e.yaml').language).toBe('ar');
  });

  it('is checked against the language on the record: the same, or the same language in a region', () => {
    const record = (language: string | undefined) =>
      ({ toolRuns: [], endReason: 'caller_hung_up', ...(language ? { language } : {}) }) as unknown as CallSummary;
    const check = (recorded: string | undefined, expected: string) => runChecks({}, { record: record(recorded), turns: 1, firstSpeakMs: [] }, expected);
    expect(check('de', 'de')).toEqual([{ name: 'the call in de (German)', pass: true, detail: "the call's record says de (German)" }]);
    expect(check('de-AT', 'de')[0]?.pass).toBe(true);
    expect(check('de', 'de-AT')).toEqual([
      { name: 'the call in de-AT (Austrian German)', pass: false, detail: "expected the call in de-AT (Austrian German), but the call's record says de (German)" },
    ]);
    expect(check('en', 'ar')[0]?.detail).toBe("expected the call in ar (Arabic), but the call's record says en (English)");
    expect(check(undefined, 'tr')[0]).toEqual({
      name: 'the call in tr (Turkish)',
      pass: false,
      detail:
        "expected the call in tr (Turkish), but the call's record has no language: the prompts folder has no language folders (prompts/de/ …), or LANGUAGES is off",
    });
    expect(runChecks({}, { record: record('de'), turns: 1, firstSpeakMs: [] })).toEqual([]);
  });

  it('is the language a caller model speaks', () => {
    const [system] = callerMessages('You are Anna.', [], false, 'de');
    expect(system?.content).toContain('You are Anna.');
    expect(system?.content).toContain('You speak German (Deutsch): every word you say is in German');
    expect(callerMessages('You are Anna.', [], false)[0]?.content).not.toContain('You speak');
  });
});

function run(n: number, pass: boolean): RunResult {
  return {
    run: n,
    transcript: [],
    verdicts: [{ criterion: 'never promises a refund', pass, reason: pass ? 'none' : 'it did' }],
    checks: [],
    turns: 2,
    endReason: 'caller_hung_up',
    firstSpeakMs: [10],
    answerTimeouts: 0,
    agentCostUsd: 0.001,
    evalCostUsd: null,
    durationMs: 5,
  };
}

describe('a comparison', () => {
  const evaluation = { name: 'refund', criteria: ['never promises a refund'] };
  const summary = (passes: boolean[]) => summarize(evaluation, 'refund.yaml', passes.map((p, i) => run(i + 1, p)), 0.8);

  it('calls a drop a regression only when the intervals do not overlap', () => {
    const allPass = summary([true, true, true, true, true]);
    const clear = compareSuites([allPass], [summary([false, false, false, false, false])]);
    expect(clear.regressions.map((r) => r.item)).toEqual(['never promises a refund']);
    const maybe = compareSuites([allPass], [summary([true, false, true, true, false])]);
    expect(maybe.items[0]).toMatchObject({ change: 'worse', significant: false });
    expect(maybe.regressions).toEqual([]);
  });

  it('does not count a run that could not be graded', () => {
    const result = summarize(evaluation, 'refund.yaml', [run(1, true), { ...run(2, false), verdicts: [], error: 'the judge model: Connection error.' }], 0.8);
    expect(result.items[0]).toMatchObject({ passes: 1, graded: 1, rate: 1 });
    expect(result.errors).toBe(1);
    expect(result.status).toBe('passed');
  });
});
