/** The parts of `npm run eval` that need no call: verdicts read, intervals, the cut transcript, comparisons. */
import { describe, expect, it } from 'vitest';
import { compareSuites } from '../src/evals/compare.js';
import { summarize, wilsonInterval } from '../src/evals/eval-summary.js';
import { HeardTranscript } from '../src/evals/heard-transcript.js';
import { readVerdict } from '../src/evals/judge.js';
import type { RunResult } from '../src/evals/run-eval.js';
import { callerMessages } from '../src/evals/simulated-caller.js';

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
