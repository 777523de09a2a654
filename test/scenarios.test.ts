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
    // The shipped prompts have languages: the recogniser is told them before the greeting.
    expect(withoutOptions(result.message)).toBe(
      'step 1: expected a speak equal to "Good morning!" within 300 ms, got configure_transcription, speak "Hello, thanks for calling! How can I help you today?"',
    );
  });

  test('stale speech is caught: a "barge-in" Hotline rightly takes for a redelivery lets the old reply go on', async () => {
    const scenario = parseScenario(
      [
        'name: swallowed-barge-in',
        // No playback events: the greeting's end between the two says would make the second a new utterance.
        'call: { playback: manual }',
        'model:',
        '  - reply: { content: "One is here. Two is here. Three is here.", ttft_ms: 300, token_delay_ms: 20 }',
        'steps:',
        '  - expect: { speak: true }',
        '  - say: "Go on"',
        // The same payload again while the model is still silent, nothing else having happened, is a
        // redelivery: Hotline ignores it and keeps talking.
        '  - say: "Go on"',
        '    wait_for: request',
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

  test('wait_for: request when nothing asks the model: the step fails and says so', async () => {
    const scenario = parseScenario(['name: never-asked', 'timeout_ms: 200', 'steps:', '  - say: "Hello"', '    wait_for: request'].join('\n'), 'never.yaml');
    const result = await runScenario(scenario, FAST);
    expect(result).toMatchObject({ status: 'failed', failedStep: 1 });
    expect(result.message).toBe('step 1: wait_for: request: the model was not asked for a reply within 200 ms');
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

describe('stubbed tools: `tools:` and `expect: tool`', () => {
  const LOOKUP = [
    'tools:',
    '  order_status:',
    '    returns: { status: shipped }',
    'model:',
    '  - when_tool_result: /shipped/',
    '    reply: { content: "It has shipped." }',
    '  - when: order',
    '    reply: { tool_calls: [{ name: order_status, arguments: { order_number: "4711" } }] }',
  ];

  test('stubs and tool expectations are checked as the file is read', () => {
    expect(
      problemsOf(
        [
          'name: bad-tools',
          'tools:',
          '  speak: { returns: hi }',
          '  "two words": { returns: hi }',
          '  fine: { parameters: { type: array }, outcome: maybe }',
          'steps:',
          '  - say: hi',
        ].join('\n'),
      ),
    ).toEqual([
      'bad.yaml:3: tools.speak: "speak" is the name of one of Hotline\'s own tools (speak, transfer, hangup, do_not_call, send_sms), in any spelling',
      'bad.yaml:4: tools.two words: "two words" is no tool name: use 1 to 64 letters, digits, _ and -',
      'bad.yaml:5: tools.fine.outcome: Invalid option: expected one of "ok"|"error"|"timeout"',
      'bad.yaml:5: tools.fine.parameters.type: the arguments are an object: write type: object',
    ]);
    expect(
      problemsOf(
        [
          'name: bad-expectations',
          'tools:',
          '  fine: { returns: { status: shipped } }',
          'model:',
          // Not the default rule: that is a rule with neither `when` nor `when_tool_result`.
          '  - when_tool_result: shipped',
          '    reply: { content: "Shipped." }',
          '  - reply: { content: "Hello." }',
          'steps:',
          '  - expect: { tool: { name: lookup } }',
          '  - expect: { tool: { name: fine, times: 0, heard_while_running: true } }',
        ].join('\n'),
      ),
    ).toEqual([
      'bad.yaml:10: steps[1].expect.tool.heard_while_running: nothing is heard while a tool runs that is not called (times: 0)',
    ]);
    expect(problemsOf(['name: not-stubbed', 'steps:', '  - expect: { tool: { name: lookup } }'].join('\n'))).toEqual([
      'bad.yaml:3: steps[0].expect.tool.name: lookup is not stubbed: only the calls of the tools under `tools:` are recorded',
    ]);
  });

  test('a call counted once too often, arguments that differ (as JSON values), a hold line that never came', async () => {
    const scenario = parseScenario(
      [
        'name: tool-failures',
        ...LOOKUP,
        'steps:',
        '  - say: "Where is my order?"',
        '  - expect: { speak: { equals: "It has shipped." } }',
        '  - expect: { tool: { name: order_status, arguments: { order_number: 4711 } }, timeout_ms: 200 }',
      ].join('\n'),
      'failures.yaml',
    );
    expect((await runScenario(scenario, FAST)).message).toBe(
      'step 3: expected a call of order_status with arguments {"order_number":4711} within 200 ms, got order_status {"order_number":"4711"}',
    );

    const twice = parseScenario(
      [
        'name: tool-twice',
        ...LOOKUP,
        'steps:',
        '  - say: "Where is my order?"',
        '  - expect: { speak: { equals: "It has shipped." } }',
        '  - say: "And my other order?"',
        '  - expect: { speak: { equals: "It has shipped." } }',
        '  - expect: { tool: { name: order_status, times: 1 } }',
      ].join('\n'),
      'twice.yaml',
    );
    expect((await runScenario(twice, FAST)).message).toBe(
      'step 5: expected exactly 1 call of order_status, got 2: order_status {"order_number":"4711"}, order_status {"order_number":"4711"}',
    );

    // Answered at once: no hold line is due, so none is heard.
    const quick = parseScenario(
      [
        'name: tool-quick',
        ...LOOKUP,
        'steps:',
        '  - say: "Where is my order?"',
        '  - expect: { tool: { name: order_status, heard_while_running: { contains: "moment" } } }',
      ].join('\n'),
      'quick.yaml',
    );
    expect((await runScenario(quick, FAST)).message).toMatch(
      /^step 2: expected to hear a speak containing "moment" while order_status ran \(\d+ ms\), heard nothing$/,
    );
  });

  test('a failing stub reaches the model as an error, and a barge-in aborts a run without side effect', async () => {
    const scenario = parseScenario(
      [
        'name: tool-error-and-abort',
        'tools:',
        '  order_status: { outcome: error, returns: no order with that number, delay_ms: 20 }',
        '  slow_lookup: { delay_ms: 10000, hold: ["Still looking."] }',
        'model:',
        "  - when_tool_result: '/^error: no order with that number$/'",
        '    reply: { content: "I could not find it." }',
        '  - when: order',
        '    reply: { tool_calls: [{ name: order_status, arguments: { order_number: "1" } }] }',
        '  - when: slow',
        '    reply: { tool_calls: [{ name: slow_lookup }] }',
        '  - reply: { content: "Okay." }',
        'steps:',
        '  - say: "Where is my order?"',
        '  - expect: { speak: { equals: "I could not find it." } }',
        '  - say: "Something slow, please"',
        '  - expect: { speak: { equals: "Still looking." } }',
        '  - say: "Never mind"',
        '    barge_in: true',
        '  - expect: { speak: { equals: "Okay." } }',
        '  - expect: { tool: { name: slow_lookup, times: 1, heard_while_running: { equals: "Still looking." } } }',
      ].join('\n'),
      'error.yaml',
    );
    const result = await runScenario(scenario, FAST);
    expect(result, result.message).toMatchObject({ status: 'passed' });
  });
});

describe("a scenario's language: the call's record must end in it", () => {
  test('is a language as a prompts folder is named; it needs a language per call, and an outbound request asks for no other', () => {
    expect(parseScenario('name: x\nlanguage: TR\nsteps:\n  - end: true\n', 'x.yaml').language).toBe('tr');
    expect(
      problemsOf(
        [
          'name: languages',
          'language: Deutsch',
          'steps:',
          '  - end: true',
        ].join('\n'),
      ),
    ).toEqual(['bad.yaml:2: language: "Deutsch" is no language: write it as its prompts folder is named, e.g. de, tr, ar or pt-BR']);
    expect(
      problemsOf(
        [
          'name: languages',
          'language: de',
          'env: { LANGUAGES: "false" }',
          'call: { direction: outbound, variables: { name: Anna, language: tr } }',
          'steps:',
          '  - end: true',
        ].join('\n'),
      ),
    ).toEqual([
      'bad.yaml:3: env.LANGUAGES: LANGUAGES is on for a call with a language (language: is given): remove this setting, or the language',
      'bad.yaml:4: call.variables.language: the request asks for tr, and language: expects de: language: alone asks the request for it',
    ]);
    // The same language, however written, is no contradiction.
    expect(parseScenario('name: x\nlanguage: de\ncall: { direction: outbound, variables: { language: DE } }\nsteps:\n  - end: true\n', 'x.yaml').language).toBe('de');
  });

  test('an outbound call asks for its language: German prompts and voice from the greeting on, and the record says de', async () => {
    const scenario = parseScenario(
      [
        'name: outbound-german',
        'language: de',
        'call: { direction: outbound, variables: { name: Anna, topic: Ihre Bestellung 42 } }',
        'steps:',
        '  - expect: { speak: { contains: "Hallo Anna", tts: { voice: de-DE-KatjaNeural } } }',
        '  - end: true',
      ].join('\n'),
      'outbound-german.yaml',
    );
    const result = await runScenario(scenario, FAST);
    expect(result, result.message).toMatchObject({ status: 'passed' });
  });

  test('a caller switching the call to German: passes as de, fails as tr with what the record says', async () => {
    const steps = [
      'steps:',
      '  - expect: { speak: { contains: "Hello, thanks for calling" } }',
      '  - say: Guten Tag, wann haben Sie am Samstag geöffnet?',
      // The demo model answers from the German system prompt the call switched to.
      '  - expect: { speak: { contains: "Samstags sind wir von 10 bis 14 Uhr", tts: { language: de-DE } } }',
    ];
    const german = await runScenario(parseScenario(['name: german-caller', 'language: de', ...steps].join('\n'), 'german.yaml'), FAST);
    expect(german, german.message).toMatchObject({ status: 'passed' });
    const turkish = await runScenario(parseScenario(['name: turkish-expected', 'language: tr', ...steps].join('\n'), 'turkish.yaml'), FAST);
    // Every step held: the language is checked once the call has ended.
    expect(turkish.status).toBe('failed');
    expect(turkish.failedStep).toBeUndefined();
    expect(turkish.message).toBe("language: expected the call in tr (Turkish), but the call's record says de (German)");
  });
});
