import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { checkPromptsFolder, PromptStore, type PromptName } from '../src/prompts/prompt-store.js';

const logger = pino({ level: 'silent' });

const FILES: Record<string, string> = {
  'system.md': 'You are a test assistant.\n',
  'greeting.md': 'Hello from the test!\n',
};

/** The lines said right before Hotline ends or hands over the call. */
const LAST_WORDS: readonly PromptName[] = [
  'giveUp',
  'giveUpTransfer',
  'idleGoodbye',
  'shutdownGoodbye',
  'shutdownTransfer',
  'silenceGoodbye',
  'outboundVoicemail',
];
const OTHER_LINES: readonly PromptName[] = [
  'greeting',
  'outboundGreeting',
  'outboundGenericGreeting',
  'error',
  'transferFailed',
  'thinking',
  'thinkingAgain',
  'silenceReprompt',
  'toolHold',
  'toolHoldAgain',
];

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-style-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries({ ...FILES, ...files })) await writeFile(path.join(dir, name), text);
  return dir;
}

async function open(files: Record<string, string> = {}) {
  const store = await PromptStore.open(await folder(files), logger);
  cleanups.push(() => store.close());
  return store.current;
}

describe('how each line is spoken', () => {
  test('built-in: the last words before Hotline ends or hands over a call cannot be interrupted; nothing else has options', async () => {
    const prompts = await open();
    for (const name of LAST_WORDS) expect(prompts.style(name), name).toEqual({ barge_in: { strategy: 'none' } });
    for (const name of [...OTHER_LINES, 'system' as const]) expect(prompts.style(name), name).toEqual({});
  });

  test("a file's own front matter sets its style and is not spoken", async () => {
    const prompts = await open({
      'greeting.md': '---\ntts: { provider: azure, voice: en-GB-SoniaNeural }\nbarge_in: { strategy: immediate }\n---\nWelcome!\n',
      'thinking.md': '---\nvad: { end_of_turn_silence_ms: 400 }\n---\nOne moment.',
    });
    expect(prompts.render('greeting', {})).toBe('Welcome!');
    expect(prompts.style('greeting')).toEqual({
      tts: { provider: 'azure', voice: 'en-GB-SoniaNeural' },
      barge_in: { strategy: 'immediate' },
    });
    expect(prompts.render('thinking', {})).toBe('One moment.');
    expect(prompts.style('thinking')).toEqual({ vad: { end_of_turn_silence_ms: 400 } });
  });

  test("a goodbye's own front matter overrides the built-in default", async () => {
    const prompts = await open({ 'idle-goodbye.md': '---\nbarge_in: { strategy: minimum_characters, minimum_characters: 5 }\n---\nBye.' });
    expect(prompts.style('idleGoodbye')).toEqual({ barge_in: { strategy: 'minimum_characters', minimum_characters: 5 } });
    expect(prompts.style('giveUp')).toEqual({ barge_in: { strategy: 'none' } });
  });

  test("system.md's options apply to every line, under the built-in defaults and the file's own, each replaced whole", async () => {
    const prompts = await open({
      'system.md': [
        '---',
        'tts: { provider: azure, language: en-US, voice: en-US-JennyNeural }',
        'barge_in: { strategy: minimum_characters, minimum_characters: 3, allow_after_ms: 500 }',
        'vad: { end_of_turn_silence_ms: 800 }',
        '---',
        'You are a test assistant.',
      ].join('\n'),
      'error.md': '---\ntts: { provider: eleven_labs, voice: { name: Rachel } }\nbarge_in: { strategy: immediate }\n---\nSorry.',
    });
    const global = {
      tts: { provider: 'azure', language: 'en-US', voice: 'en-US-JennyNeural' },
      barge_in: { strategy: 'minimum_characters', minimum_characters: 3, allow_after_ms: 500 },
      vad: { end_of_turn_silence_ms: 800 },
    };
    expect(prompts.style('system')).toEqual(global);
    expect(prompts.style('greeting')).toEqual(global);
    expect(prompts.style('silenceGoodbye')).toEqual({ ...global, barge_in: { strategy: 'none' } });
    // Replaced whole: the file's barge_in does not inherit minimum_characters or allow_after_ms.
    expect(prompts.style('error')).toEqual({ ...global, tts: { provider: 'eleven_labs', voice: { name: 'Rachel' } }, barge_in: { strategy: 'immediate' } });
  });

  test('a front matter error in an optional file: the built-in line and its built-in style', async () => {
    const dir = await folder({
      'give-up.md': '---\nbarge_in: { strategy: immediate }\nvad: { end_of_turn_silence_ms: 5 }\n---\nBye now.',
      'error.md': '---\ntts: { provider: azure\n---\nOops.',
    });
    const report = await checkPromptsFolder(dir);
    const errors = report.files.flatMap((f) => f.problems.filter((p) => p.severity === 'error'));
    expect(errors.map((p) => `${p.file}: ${p.message}`)).toEqual([
      expect.stringMatching(/^error\.md: front matter is not valid YAML \(line 3\): Flow map/),
      'give-up.md: front matter vad.end_of_turn_silence_ms: Too small: expected number to be >=150',
    ]);
    const store = await PromptStore.open(dir, logger);
    cleanups.push(() => store.close());
    expect(store.current.render('giveUp', {})).toMatch(/^I'm sorry, I'm having technical trouble/);
    expect(store.current.style('giveUp')).toEqual({ barge_in: { strategy: 'none' } });
    expect(store.current.render('error', {})).toMatch(/^I'm sorry, I'm having a little trouble/);
    expect(store.current.style('error')).toEqual({});
  });

  test('a front matter error in greeting.md stops the start', async () => {
    const dir = await folder({ 'greeting.md': '---\nbarge_in: sometimes\n---\nHello.' });
    const failure = PromptStore.open(dir, logger);
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toThrow(`greeting.md: front matter barge_in: Invalid input: expected object, received string`);
  });

  test('the new silence lines fall back to built-in defaults', async () => {
    const prompts = await open();
    expect(prompts.render('silenceReprompt', {})).toBe('Are you still there?');
    expect(prompts.render('silenceGoodbye', {})).toBe("I can't hear you, so I'll end the call now. Please call again any time. Goodbye.");
  });

  test('styles are frozen and the same object for every call', async () => {
    const prompts = await open({ 'greeting.md': '---\nbarge_in: { strategy: none }\n---\nHi.' });
    expect(prompts.style('greeting')).toBe(prompts.style('greeting'));
    expect(Object.isFrozen(prompts.style('greeting'))).toBe(true);
    expect(Object.isFrozen(prompts.style('greeting').barge_in)).toBe(true);
  });
});
