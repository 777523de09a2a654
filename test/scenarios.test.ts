import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadScenarioFiles, parseScenario, scenarioFilesIn } from '../src/scenarios/load.js';
import { runScenario, type RunOptions } from '../src/scenarios/run.js';
import { problemsOf } from './helpers/scenario-problems.js';

// Fast model timing: the scenarios' own ttft_ms / token_delay_ms still apply where timing is the point.
const FAST: RunOptions = { llmTiming: { ttftMs: 2, tokenDelayMs: 2 } };

const outcomes = await loadScenarioFiles(await scenarioFilesIn(path.resolve('scenarios')));

describe('the scenarios in scenarios/', () => {
  test('there are at least ten, and every file loads', () => {
    expect(outcomes.flatMap((o) => ('error' in o ? o.error.problems : []))).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(10);
  });

  for (const outcome of outcomes) {
    if (!('scenario' in outcome)) continue;
    const { scenario } = outcome;
    test(scenario.name, async () => {
      const result = await runScenario(scenario, FAST);
      expect(result, result.message).toMatchObject({ status: 'passed' });
    });
  }
});

/** A failure message without the speak options Hotline's prompts add (`[timeout 8 s]`): these tests are about the words. */
function withoutOptions(message: string | undefined): string | undefined {
  return message?.replace(/ \[[^\]]*\]/g, '');
}

describe('scenario files are validated with clear errors', () => {
  test('each problem names the file, the line, the path and what is wrong', () => {
    const problems = problemsOf(
      [
        'name: broken',
        'steps:',
        '  - say: 42',
        '  - say: "Stop"',
        '    barged_in: true',
        '  - expect: { speak: { matches: "(unclosed" } }',
        '  - expect: { speak: true, hangup: true }',
        '  - shout: "hello"',
      ].join('\n'),
    );
    expect(problems).toEqual([
      'bad.yaml:3: steps[0].say: Invalid input: expected string, received number',
      'bad.yaml:5: steps[1].barged_in: unknown key "barged_in"',
      expect.stringMatching(/^bad\.yaml:6: steps\[2\]\.expect\.speak\.matches: not a valid regular expression: /),
      'bad.yaml:7: steps[3].expect: an expectation does one thing, but has speak and hangup: split it',
      expect.stringMatching(/^bad\.yaml:8: steps\[4\]: a step needs one of: say, expect, .* \(found shout\)$/),
    ]);
  });

  test('missing fields, cross-field rules and YAML syntax', () => {
    expect(problemsOf('description: no name\nsteps: []')).toEqual([
      'bad.yaml:1: name: Invalid input: expected string, received undefined',
      'bad.yaml:2: steps: Too small: expected array to have >=1 items',
    ]);
    expect(
      problemsOf(
        [
          'name: cross',
          'call: { direction: inbound, variables: { name: Anna } }',
          'steps:',
          '  - finish_speech: true',
          '  - expect: { no_stale_speech: true }',
        ].join('\n'),
      ),
    ).toEqual([
      'bad.yaml:2: call.variables: variables are for outbound calls (direction: outbound)',
      'bad.yaml:4: steps[0].finish_speech: finish_speech needs call.playback: manual',
      'bad.yaml:5: steps[1].expect: no_stale_speech needs an earlier say (the barge-in)',
    ]);
    expect(problemsOf('name: x\nsteps:\n  - say: hi\nname: y\n')).toEqual(['bad.yaml:4: YAML: Map keys must be unique']);
    expect(problemsOf('')).toEqual(['bad.yaml: the file is empty']);
  });
});

describe('a scenario that does not hold fails with a useful message', () => {
  test('the wrong text: the step, what was expected and what arrived instead', async () => {
    const scenario = parseScenario(
      [
        'name: wrong-greeting',
        'steps:',
        '  - expect: { speak: { equals: "Good morning!" }, timeout_ms: 300 }',
      ].join('\n'),
      'wrong.yaml',
    );
    const result = await runScenario(scenario, FAST);
    expect(result).toMatchObject({ status: 'failed', failedStep: 1 });
    expect(withoutOptions(result.message)).toBe(
      'step 1: expected a speak equal to "Good morning!" within 300 ms, got speak "Hello, thanks for calling! How can I help you today?"',
    );
  });

  test('stale speech is caught: a "barge-in" Hotline rightly takes for a redelivery lets the old reply go on', async () => {
    const scenario = parseScenario(
      [
        'name: swallowed-barge-in',
        'model:',
        '  - reply: { content: "One is here. Two is here. Three is here.", ttft_ms: 300, token_delay_ms: 20 }',
        'steps:',
        '  - expect: { speak: true }',
        '  - say: "Go on"',
        // The same payload again while the model is still silent, nothing else having happened, is a
        // redelivery: Hotline ignores it and keeps talking.
        '  - say: "Go on"',
        '    after_ms: 100',
        '  - expect: { no_stale_speech: true }',
      ].join('\n'),
      'stale.yaml',
    );
    const result = await runScenario(scenario, FAST);
    expect(result.status).toBe('failed');
    expect(result.message).toBe(
      'step 4: expected no stale speech after the barge-in, got "One is here.", "Two is here.", "Three is here."',
    );
  });

  test('a reply that is not the whole expected text, and a live run skips scripted scenarios', async () => {
    const scenario = parseScenario(
      [
        'name: partial-reply',
        'requires: scripted',
        'model:',
        '  - reply: { content: "First part. Second part." }',
        'steps:',
        '  - expect: { speak: true }',
        '  - say: "Hello"',
        '  - expect: { reply: { equals: "First part. Another part." } }',
      ].join('\n'),
      'partial.yaml',
    );
    const result = await runScenario(scenario, FAST);
    expect(withoutOptions(result.message)).toBe('step 3: expected the reply "First part. Another part.", got speak "First part.", speak "Second part."');
    expect(await runScenario(scenario, { live: true, env: {} })).toMatchObject({ status: 'skipped' });
  });
});
