import { describe, expect, test } from 'vitest';
import { parseFrontMatter, parseLineFrontMatter } from '../src/prompts/front-matter.js';
import { DEFAULT_PROMPT_SETTINGS as DEFAULTS } from './helpers/prompt-defaults.js';


function system(yaml: string): ReturnType<typeof parseFrontMatter> {
  return parseFrontMatter(`---\n${yaml}\n---\nYou help.\n`);
}

function errors(result: { problems: { severity: string; message: string }[] }): string[] {
  return result.problems.filter((p) => p.severity === 'error').map((p) => p.message);
}

describe('system.md: transfer targets and caller id', () => {
  test('a target is a number, or a number with its own caller id and ring time; numbers stay as written', () => {
    const result = system(
      [
        'transfer_targets:',
        '  sales: 4930111111',
        '  office: 030123',
        '  support: { number: "4930222222", caller_id_name: Support line, caller_id_number: 04930123456, timeout_seconds: 30 }',
        '  intl:',
        '    number: +4940222',
        'transfer: { caller_id_name: Hotline, caller_id_number: 04930123456, timeout_seconds: 45 }',
      ].join('\n'),
    );
    expect(result.problems).toEqual([]);
    expect(result.settings.transferTargets).toEqual({
      sales: { number: '4930111111' },
      office: { number: '030123' },
      support: { number: '4930222222', callerIdName: 'Support line', callerIdNumber: '04930123456', timeoutSeconds: 30 },
      intl: { number: '+4940222' },
    });
    expect(result.settings.transfer).toEqual({ callerIdName: 'Hotline', callerIdNumber: '04930123456', timeoutSeconds: 45 });
  });

  test('only what is written is set, so the global caller id can apply to a target without one', () => {
    const result = system('transfer_targets:\n  sales: { number: "4930111111", timeout_seconds: 20 }\ntransfer: { timeout_seconds: 60 }');
    expect(result.settings.transferTargets.sales).toStrictEqual({ number: '4930111111', timeoutSeconds: 20 });
    expect(result.settings.transfer).toStrictEqual({ timeoutSeconds: 60 });
  });

  test.each([
    ['a target that is no number', 'transfer_targets:\n  sales: 1.5', 'front matter transfer_targets.sales: must be a phone number, or { number, caller_id_name, caller_id_number, timeout_seconds }'],
    ['a target object without a number', 'transfer_targets:\n  sales: { caller_id_name: Sales }', 'front matter transfer_targets.sales.number: must be a phone number'],
    ['a target number that is no number', 'transfer_targets:\n  sales: { number: [1] }', 'front matter transfer_targets.sales.number: must be a phone number'],
    ['a ring time too short', 'transfer_targets:\n  sales: { number: 49301, timeout_seconds: 2 }', 'front matter transfer_targets.sales.timeout_seconds: Too small: expected number to be >=5'],
    ['a misspelt target key', 'transfer_targets:\n  sales: { number: 49301, timout_seconds: 20 }', 'front matter transfer_targets.sales: Unrecognized key: "timout_seconds"'],
    ['a global ring time too long', 'transfer: { timeout_seconds: 121 }', 'front matter transfer.timeout_seconds: Too big: expected number to be <=120'],
    ['a caller id name that is a list', 'transfer: { caller_id_name: [a] }', 'front matter transfer.caller_id_name: must be the name the callee sees, such as "Hotline"'],
    ['a caller id number that is no number', 'transfer: { caller_id_number: -5 }', 'front matter transfer.caller_id_number: must be a phone number'],
    ['a transfer that is no mapping', 'transfer: 4930111', 'front matter transfer: Invalid input: expected object, received number'],
  ])('%s is an error and sets nothing', (_what, yaml, message) => {
    const result = system(yaml);
    expect(errors(result)).toEqual([message]);
    expect(result.settings).toEqual(DEFAULTS);
  });
});

describe('system.md: how lines are spoken', () => {
  test('tts, barge_in and vad are the global style; ssml switches the text format', () => {
    const result = system(
      [
        'tts: { provider: azure, language: en-US, voice: en-US-JennyNeural }',
        'barge_in: { strategy: minimum_characters, minimum_characters: 3, allow_after_ms: 500 }',
        'vad: { end_of_turn_silence_ms: 800 }',
        'ssml: true',
      ].join('\n'),
    );
    expect(result.problems).toEqual([]);
    expect(result.settings).toEqual({
      ...DEFAULTS,
      ssml: true,
      style: {
        tts: { provider: 'azure', language: 'en-US', voice: 'en-US-JennyNeural' },
        barge_in: { strategy: 'minimum_characters', minimum_characters: 3, allow_after_ms: 500 },
        vad: { end_of_turn_silence_ms: 800 },
      },
    });
  });

  test('an ElevenLabs voice by id or by name', () => {
    expect(system('tts: { provider: eleven_labs, voice: abc123 }').settings.style).toEqual({ tts: { provider: 'eleven_labs', voice: 'abc123' } });
    expect(system('tts:\n  provider: eleven_labs\n  voice: { name: Rachel }').settings.style.tts).toEqual({
      provider: 'eleven_labs',
      voice: { name: 'Rachel' },
    });
  });

  test('settings are frozen: a call cannot change them for the next one', () => {
    const { settings } = system('tts: { provider: azure, voice: v }\ntransfer_targets:\n  sales: 1');
    expect(Object.isFrozen(settings.style.tts)).toBe(true);
    expect(Object.isFrozen(settings.transferTargets.sales)).toBe(true);
    expect(Object.isFrozen(settings.keypad)).toBe(true);
  });

  test.each([
    ['an unknown TTS provider', 'tts: { provider: google }', "front matter tts.provider: Invalid discriminator value. Expected 'azure' | 'eleven_labs'"],
    ['a TTS field that does not exist', 'tts: { provider: azure, speed: 2 }', 'front matter tts: Unrecognized key: "speed"'],
    ['an unknown barge-in strategy', 'barge_in: { strategy: sometimes }', 'front matter barge_in.strategy: Invalid option: expected one of "none"|"manual"|"minimum_characters"|"immediate"'],
    ['barge_in as a word', 'barge_in: none', 'front matter barge_in: Invalid input: expected object, received string'],
    ['a VAD pause too short', 'vad: { end_of_turn_silence_ms: 50 }', 'front matter vad.end_of_turn_silence_ms: Too small: expected number to be >=150'],
    ['ssml that is no yes or no', 'ssml: maybe', 'front matter ssml: Invalid input: expected boolean, received string'],
  ])('%s is an error', (_what, yaml, message) => {
    const result = system(yaml);
    expect(errors(result)).toEqual([message]);
    expect(result.settings).toEqual(DEFAULTS);
  });
});

describe('system.md: silence and keypad', () => {
  test('defaults: no silence prompts, keypad input ends at #, after 3 s or at 20 digits', () => {
    expect(parseFrontMatter('You help.').settings).toEqual(DEFAULTS);
  });

  test('each value set, and a missing one keeps its default', () => {
    expect(system('silence: { timeout_seconds: 8, reprompts: 0 }').settings.silence).toEqual({ timeoutSeconds: 8, reprompts: 0 });
    expect(system('silence: { timeout_seconds: 60 }').settings.silence).toEqual({ timeoutSeconds: 60, reprompts: 2 });
    expect(system('keypad: { end_key: "*", pause_ms: 500, max_digits: 64 }').settings.keypad).toEqual({
      endKey: '*',
      pauseMs: 500,
      maxDigits: 64,
    });
    expect(system('keypad: { end_key: none, pause_ms: 15000 }').settings.keypad).toEqual({ endKey: undefined, pauseMs: 15000, maxDigits: 20 });
    expect(system('keypad: { pause_ms: 0, max_digits: 1 }').settings.keypad).toEqual({ endKey: '#', pauseMs: 0, maxDigits: 1 });
  });

  test.each([
    ['a silence timeout over a minute', 'silence: { timeout_seconds: 61 }', 'front matter silence.timeout_seconds: Too big: expected number to be <=60'],
    ['a negative silence timeout', 'silence: { timeout_seconds: -1 }', 'front matter silence.timeout_seconds: Too small: expected number to be >=0'],
    ['a fractional silence timeout', 'silence: { timeout_seconds: 2.5 }', 'front matter silence.timeout_seconds: Invalid input: expected int, received number'],
    ['too many reprompts', 'silence: { reprompts: 6 }', 'front matter silence.reprompts: Too big: expected number to be <=5'],
    ['a misspelt silence key', 'silence: { timeout: 8 }', 'front matter silence: Unrecognized key: "timeout"'],
    ['an end key that is a digit', 'keypad: { end_key: "5" }', 'front matter keypad.end_key: must be "#", "*" or "none", in quotes (an unquoted # starts a YAML comment)'],
    // YAML reads an unquoted # as the start of a comment, so the key has no value.
    ['an unquoted #', 'keypad:\n  end_key: #', 'front matter keypad.end_key: must be "#", "*" or "none", in quotes (an unquoted # starts a YAML comment)'],
    ['a keypad pause between 0 and 500', 'keypad: { pause_ms: 200 }', 'front matter keypad.pause_ms: must be 0 (only the end key or max_digits ends the input) or 500 to 15000'],
    ['a keypad pause over 15 s', 'keypad: { pause_ms: 15001 }', 'front matter keypad.pause_ms: must be 0 (only the end key or max_digits ends the input) or 500 to 15000'],
    ['no digits at all', 'keypad: { max_digits: 0 }', 'front matter keypad.max_digits: Too small: expected number to be >=1'],
    ['too many digits', 'keypad: { max_digits: 65 }', 'front matter keypad.max_digits: Too big: expected number to be <=64'],
  ])('%s is an error', (_what, yaml, message) => {
    const result = system(yaml);
    expect(errors(result)).toEqual([message]);
    expect(result.settings).toEqual(DEFAULTS);
  });
});

describe('system.md: audio', () => {
  test('clip paths are passed on as written; a name Hotline does not play is warned about and ignored', () => {
    const result = system('audio:\n  transfer: audio/transfer-chime.wav\n  hold: " hold.wav "\n  ringback: audio/ring.wav');
    expect(result.audio).toEqual({ transfer: 'audio/transfer-chime.wav', hold: 'hold.wav' });
    expect(result.problems).toEqual([{ severity: 'warning', message: 'audio.ringback is ignored: Hotline plays clips only for transfer and hold' }]);
  });

  test.each([
    ['a clip that is no path', 'audio: { transfer: 5 }', 'front matter audio.transfer: must name a WAV file in the prompts folder, such as audio/transfer-chime.wav'],
    ['an empty clip path', 'audio: { hold: "" }', 'front matter audio.hold: must name a WAV file in the prompts folder, such as audio/transfer-chime.wav'],
    ['audio as a single path', 'audio: chime.wav', 'front matter audio: Invalid input: expected object, received string'],
  ])('%s is an error and names no clip', (_what, yaml, message) => {
    const result = system(yaml);
    expect(errors(result)).toEqual([message]);
    expect(result.audio).toEqual({});
  });

  test('every key at once: the unknown-key warning lists them', () => {
    const result = system('colour: blue');
    expect(result.problems).toEqual([
      {
        severity: 'warning',
        message:
          'unknown front matter key "colour" is ignored (known: model, temperature, transfer_targets, transfer, tts, barge_in, vad, ssml, silence, keypad, audio)',
      },
    ]);
  });
});

describe('front matter of the other prompt files', () => {
  test('tts, barge_in and vad set how the line is spoken; the header is not part of the text', () => {
    const result = parseLineFrontMatter('---\nbarge_in: { strategy: none }\ntts: { provider: azure, voice: de-DE-KatjaNeural }\n---\nGoodbye.\n');
    expect(result).toEqual({
      style: { barge_in: { strategy: 'none' }, tts: { provider: 'azure', voice: 'de-DE-KatjaNeural' } },
      body: 'Goodbye.\n',
      bodyLine: 5,
      problems: [],
    });
  });

  test('no header: no style, the whole text', () => {
    expect(parseLineFrontMatter('Hello.\n')).toEqual({ style: {}, body: 'Hello.\n', bodyLine: 1, problems: [] });
  });

  test("a call's setting here is warned about and ignored", () => {
    const result = parseLineFrontMatter('---\nmodel: m\nsilence: { timeout_seconds: 3 }\nvad: { end_of_turn_silence_ms: 300 }\n---\nHi');
    expect(result.style).toEqual({ vad: { end_of_turn_silence_ms: 300 } });
    expect(result.problems.map((p) => `${p.severity}: ${p.message}`)).toEqual([
      'warning: unknown front matter key "model" is ignored (known here: tts, barge_in, vad; the settings of the whole call belong in system.md)',
      'warning: unknown front matter key "silence" is ignored (known here: tts, barge_in, vad; the settings of the whole call belong in system.md)',
    ]);
  });

  test.each([
    ['an invalid value', '---\nbarge_in: { strategy: never }\n---\nHi', /^front matter barge_in\.strategy: Invalid option/],
    ['invalid YAML', '---\nvad: [oops\n---\nHi', /^front matter is not valid YAML \(line \d\)/],
    ['a header never closed', '---\nvad: { end_of_turn_silence_ms: 300 }\nHi', /never closed/],
  ])('%s is an error and sets no style', (_what, text, message) => {
    const result = parseLineFrontMatter(text);
    expect(errors(result)).toEqual([expect.stringMatching(message)]);
    expect(result.style).toEqual({});
  });
});
