/**
 * Scenario steps and expectations for what the production service adds to the
 * spec: keys, silence, user_barge_in, speak options, action sequences with
 * audio and barge_in, and transfers with caller id. Played against a scripted
 * stand-in for Hotline (test/helpers/scripted-hotline.ts) that sends such
 * actions on cue, so every field can be checked whatever Hotline sends today.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { parseScenario } from '../src/scenarios/load.js';
import { playScenario } from '../src/scenarios/run.js';
import { startScriptedHotline, type ScriptedHotline, type SentEvent } from './helpers/scripted-hotline.js';
import { problemsOf } from './helpers/scenario-problems.js';

const GREETING = {
  type: 'speak',
  text: 'Welcome, please type your customer number.',
  barge_in: { strategy: 'none' },
  tts: { provider: 'azure', language: 'de-DE', voice: 'de-DE-KatjaNeural' },
  user_input_timeout_seconds: 8,
  vad: { end_of_turn_silence_ms: 800 },
};
const TRANSFER = {
  type: 'transfer',
  target: '+49 30 999999',
  target_phone_number: '4930999999',
  caller_id_name: 'Hotline',
  caller_id_number: '4915112345678',
  timeout: 30,
};

let fake: ScriptedHotline | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A Hotline stand-in: keys up to '#' are answered after a barge_in action and a clip, silence with a re-prompt, words barged in with a transfer. */
async function scriptedHotline(): Promise<ScriptedHotline> {
  let keys = '';
  fake = await startScriptedHotline((event) => {
    switch (event.type) {
      case 'session_start':
        return { actions: GREETING };
      case 'dtmf_received':
        if (event.digit !== '#') {
          keys += String(event.digit);
          return undefined;
        }
        const typed = keys;
        keys = '';
        return {
          actions: [
            { type: 'barge_in' },
            { type: 'audio', audio: Buffer.alloc(100 * 32).toString('base64') },
            { type: 'speak', ssml: `<speak>Customer <say-as interpret-as="digits">${typed}</say-as></speak>` },
          ],
        };
      case 'user_input_timeout':
        return { actions: { type: 'speak', text: 'Are you still there?', user_input_timeout_seconds: 8 } };
      case 'user_barge_in':
        return typeof event.text === 'string' ? { actions: TRANSFER } : undefined;
      default:
        return undefined;
    }
  });
  return fake;
}

async function play(yaml: string, hotline: ScriptedHotline) {
  const scenario = parseScenario(yaml, 'test.yaml');
  return playScenario(scenario, { url: '', wsUrl: hotline.wsUrl, adminToken: '' }, undefined, { stepTimeoutMs: 1000 });
}

function callerEvents(events: readonly SentEvent[]): unknown[] {
  return events
    .filter((e) => e.type !== 'assistant_speak' && e.type !== 'assistant_speech_ended')
    .map(({ session: _session, ...fields }) => fields);
}

describe('scenario steps for keys, silence and user_barge_in; expectations on options, sequences and transfers', () => {
  test('a scenario that holds passes, and each step sends what the service would', async () => {
    const hotline = await scriptedHotline();
    const result = await play(
      `
name: production-fields
steps:
  - expect:
      speak:
        contains: customer number
        barge_in: { strategy: none }
        tts: { provider: azure, voice: de-DE-KatjaNeural }
        vad: { end_of_turn_silence_ms: 800 }
        user_input_timeout_seconds: 8
  - dtmf: "08"
  - dtmf: "15#"
  - expect: { actions: [barge_in, audio] }
  - expect: { speak: { equals: "Customer 0815", ssml: { contains: 'interpret-as="digits"' } } }
  - silence: true
  - expect: { speak: { equals: "Are you still there?", ssml: false, user_input_timeout_seconds: 8 } }
  - barge_in: true
  - barge_in: "Put me through"
  - expect:
      transfer:
        target: "+49 30 999999"
        target_phone_number: 4930999999
        caller_id_name: Hotline
        caller_id_number: "4915112345678"
        timeout: 30
  - expect: { no_action_within_ms: 100 }
`,
      hotline,
    );
    expect(result, result.message).toMatchObject({ status: 'passed' });
    expect(callerEvents(hotline.events)).toEqual([
      expect.objectContaining({ type: 'session_start' }),
      // A leading 0 survives: keys are text.
      { type: 'dtmf_received', digit: '0' },
      { type: 'dtmf_received', digit: '8' },
      { type: 'dtmf_received', digit: '1' },
      { type: 'dtmf_received', digit: '5' },
      { type: 'dtmf_received', digit: '#' },
      { type: 'user_input_timeout' },
      { type: 'user_barge_in' },
      { type: 'user_barge_in', text: 'Put me through' },
    ]);
    // The silence came once the re-prompt's playback had ended, as the service reports it.
    const types = hotline.events.map((e) => e.type);
    expect(types.slice(types.indexOf('user_input_timeout') - 2, types.indexOf('user_input_timeout'))).toEqual([
      'assistant_speak',
      'assistant_speech_ended',
    ]);
  });

  test('a wrong option, a wrong sequence and a wrong caller id each fail with what arrived, options and all', async () => {
    const hotline = await scriptedHotline();
    const wrongOption = await play(
      'name: wrong-option\nsteps:\n  - expect: { speak: { barge_in: { strategy: immediate } }, timeout_ms: 200 }\n',
      hotline,
    );
    expect(wrongOption.message).toBe(
      'step 1: expected a speak with barge_in {strategy: immediate} within 200 ms, got speak "Welcome, please type your customer number." ' +
        '[barge_in: none · voice: azure de-DE-KatjaNeural · timeout 8 s · vad 800 ms]',
    );

    const wrongSequence = await play('name: wrong-sequence\nsteps:\n  - expect: { speak: true }\n  - dtmf: "1#"\n  - expect: { actions: [speak] }\n', hotline);
    expect(wrongSequence.message).toBe('step 3: expected the actions speak, got barge_in');
    const tooFew = await play(
      'name: too-few\nsteps:\n  - expect: { speak: true }\n  - dtmf: "1#"\n  - expect: { actions: [barge_in, audio, speak, hangup], timeout_ms: 200 }\n',
      hotline,
    );
    expect(tooFew.message).toBe(
      'step 3: expected the actions barge_in, audio, speak, hangup within 200 ms, got barge_in, audio clip 100 ms, ' +
        'speak "<speak>Customer <say-as interpret-as=\\"digits\\">1</say-as></speak>" [ssml]',
    );

    const wrongCallerId = await play(
      'name: wrong-caller-id\nsteps:\n  - barge_in: "A person, please"\n  - expect: { transfer: { caller_id_name: Shop, timeout: 30 }, timeout_ms: 200 }\n',
      hotline,
    );
    expect(wrongCallerId.message).toBe(
      'step 2: expected a transfer with caller_id_name "Shop", timeout 30 within 200 ms, got speak "Welcome, please type your customer number." ' +
        '[barge_in: none · voice: azure de-DE-KatjaNeural · timeout 8 s · vad 800 ms], ' +
        'transfer → +49 30 999999 (dials 4930999999) · caller id "Hotline" 4915112345678 · rings 30 s',
    );
  });

  test('silence with manual playback waits for no one: the speech must have been finished first', async () => {
    const hotline = await scriptedHotline();
    const result = await play('name: manual-silence\ncall: { playback: manual }\nsteps:\n  - expect: { speak: true }\n  - silence: true\n', hotline);
    expect(result.message).toBe(
      'step 2: silence: a speech is still playing (the service reports silence only after the playback): add finish_speech first',
    );
    expect(hotline.events.some((e) => e.type === 'user_input_timeout')).toBe(false);
  });
});

describe('the new syntax is validated with clear errors', () => {
  test('keys, silence, barge_in, env, action types, options and transfer fields', () => {
    expect(
      problemsOf(
        [
          'name: broken',
          'env: { PORT: 1, lower_case: x, X: [1] }',
          'steps:',
          '  - dtmf: 4711',
          '  - dtmf: "12x"',
          '  - silence: false',
          '  - say: hi',
          '    barge_in: "words"',
          '  - barge_in: false',
          '  - dtmf: "1"',
          '    barge_in: true',
          '  - expect: { actions: [speak, beep] }',
          '  - expect: { speak: { barge_in: { strategy: sometimes } } }',
          '  - expect: { speak: { ssml: 1, user_input_timeout_seconds: "8" } }',
          '  - expect: { transfer: { caller_id: x } }',
        ].join('\n'),
      ),
    ).toEqual([
      'bad.yaml:2: env.PORT: PORT is set by the scenario runner',
      'bad.yaml:2: env.lower_case: a setting is named in capitals, digits and _, as in .env',
      'bad.yaml:2: env.X: a setting is text, a number or true/false',
      'bad.yaml:4: steps[0].dtmf: keys are text: quote them, e.g. dtmf: "0815#" (a bare number loses leading zeros)',
      'bad.yaml:5: steps[1].dtmf: "x" is not a keypad key: keys are 0-9, *, # and A-D',
      'bad.yaml:6: steps[2].silence: Invalid input: expected true',
      'bad.yaml:8: steps[3].barge_in: barge_in of a say is true or false (user_barge_in with words is a step of its own: - barge_in: "words")',
      'bad.yaml:9: steps[4].barge_in: barge_in is true, or the words the caller barges in with',
      'bad.yaml:10: steps[5]: a step does one thing, but has dtmf and barge_in: split it',
      'bad.yaml:12: steps[6].expect.actions[1]: an action type is one of: speak, audio, hangup, transfer, barge_in, configure_transcription, send_sms',
      'bad.yaml:13: steps[7].expect.speak.barge_in.strategy: Invalid option: expected one of "none"|"manual"|"minimum_characters"|"immediate"',
      'bad.yaml:14: steps[8].expect.speak.ssml: ssml is true, false or a mapping',
      'bad.yaml:14: steps[8].expect.speak.user_input_timeout_seconds: Invalid input: expected number, received string',
      'bad.yaml:15: steps[9].expect.transfer.caller_id: unknown key "caller_id"',
    ]);
  });

  test('a say keeps its barge_in; a barge_in step of its own is user_barge_in and counts as the interruption for no_stale_speech', () => {
    const scenario = parseScenario(
      [
        'name: fine',
        'env: { TRANSFER_TIMEOUT_SECONDS: 30, ACTION_ARRAYS: websocket }',
        'steps:',
        '  - say: "Stop"',
        '    barge_in: true',
        '  - barge_in: true',
        '  - barge_in: "Put me through"',
        '    wait_for: speak',
        '  - expect: { no_stale_speech: true }',
        '  - dtmf: "0815 *#"',
        '  - dtmf: "abcd"',
      ].join('\n'),
      'fine.yaml',
    );
    expect(scenario.env).toEqual({ TRANSFER_TIMEOUT_SECONDS: '30', ACTION_ARRAYS: 'websocket' });
    expect(scenario.steps).toEqual([
      { say: 'Stop', barge_in: true },
      { barge_in: true },
      { barge_in: 'Put me through', wait_for: 'speak' },
      { expect: { no_stale_speech: true } },
      { dtmf: '0815*#' },
      { dtmf: 'ABCD' },
    ]);
    expect(parseScenario('name: after-barge-in\nsteps:\n  - barge_in: true\n  - expect: { no_stale_speech: true }\n', 'ok.yaml').steps).toHaveLength(2);
  });
});
