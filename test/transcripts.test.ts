/**
 * The transcript is the call's record: what the caller heard is on disk as
 * soon as it can no longer change, so a process killed a moment later loses
 * nothing of it; and every call has a file of its own.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { transcriptFileName } from '../src/transcripts/transcript-store.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import type { TestHotline } from './helpers/hotline.js';
import { testCalls, type ConnectOptions } from './helpers/test-calls.js';

const calls = testCalls();
let env: TestHotline;
const connect = (options: ConnectOptions): Promise<FakeVoiceService> => calls.connect(options);

/** The transcript as it is on disk right now: what a SIGKILL would leave. */
async function onDisk(sessionId: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(path.join(env.transcriptsDir, transcriptFileName(sessionId)), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const assistantLines = async (id: string): Promise<unknown[]> =>
  (await onDisk(id)).filter((l) => l.role === 'assistant').map((l) => l.text);

describe('a reply is on disk as soon as it is final', () => {
  test('once it has played: no later event is needed', async () => {
    env = await calls.start(() => ({ content: 'Your booking reference is K 4 7 1.' }));
    const service = await connect({ playback: { kind: 'manual' } });
    service.start();
    await service.nextOfType('speak');
    service.finishSpeech();
    service.say('What is my reference?');
    await service.next((a) => a.text === 'Your booking reference is K 4 7 1.');
    expect(await assistantLines(service.sessionId)).not.toContain('Your booking reference is K 4 7 1.');
    service.finishSpeech();
    // Nothing else happens in the call: the line must be on disk all the same.
    await expect.poll(() => assistantLines(service.sessionId)).toContain('Your booking reference is K 4 7 1.');
  });

  test('without playback events: once the estimated playback has run out', async () => {
    env = await calls.start(() => ({ content: 'Your booking reference is K 4 7 1.' }), { PLAYBACK_GRACE_MS: '50' });
    const service = await connect({ playback: { kind: 'none' } });
    service.start();
    await service.nextOfType('speak');
    service.say('What is my reference?');
    await service.next((a) => a.text === 'Your booking reference is K 4 7 1.');
    await expect.poll(() => assistantLines(service.sessionId), { timeout: 5000 }).toEqual([
      'Hello, thanks for calling! How can I help you today?',
      'Your booking reference is K 4 7 1.',
    ]);
  });

  test('a reply cut by the caller is written at once, as far as it was heard', async () => {
    env = await calls.start((request) =>
      request.messages.length > 3 ? { content: 'Sure.' } : { content: 'First part of it. Second part of it.', tokenDelayMs: 30 },
    );
    const service = await connect({ playback: { kind: 'manual' } });
    service.start();
    await service.nextOfType('speak');
    service.finishSpeech();
    service.say('Tell me');
    await service.next((a) => a.text === 'First part of it.');
    service.say('Wait', { bargedIn: true });
    await expect.poll(() => onDisk(service.sessionId)).toContainEqual(expect.objectContaining({ role: 'assistant', interrupted: true }));
  });
});

describe('one file per call', () => {
  test('ids that differ only in characters a file name cannot hold get files of their own, every line naming its call', async () => {
    env = await calls.start(() => ({ content: 'Noted.' }));
    const ids = ['acme/X', 'acme:X', 'acme_X'];
    for (const [i, id] of ids.entries()) {
      const service = await connect({ sessionId: id, playback: { kind: 'auto', msPerChar: 0.1 } });
      service.start();
      await service.nextOfType('speak');
      service.say(`caller ${i}`);
      await service.nextOfType('speak');
      service.end();
      await expect.poll(() => env.hotline.registry.size).toBe(0);
    }
    // The folder also holds the database of calls (DATABASE_FILE's default): the transcripts are the .jsonl files.
    const files = (await readdir(env.transcriptsDir)).filter((f) => f.endsWith('.jsonl'));
    expect(files).toHaveLength(3);
    for (const [i, id] of ids.entries()) {
      const lines = await onDisk(id);
      expect(lines.every((l) => l.session_id === id)).toBe(true);
      expect(lines.filter((l) => l.role === 'user').map((l) => l.text)).toEqual([`caller ${i}`]);
    }
    expect(transcriptFileName('acme_X')).toBe('acme_X.jsonl');
    expect(transcriptFileName('acme/X')).toMatch(/^acme_X-[0-9a-f]{12}\.jsonl$/);
    const long = 'a'.repeat(200);
    expect(transcriptFileName(`${long}1`)).not.toBe(transcriptFileName(`${long}2`));
    expect(transcriptFileName('../../etc/passwd')).not.toContain('/');
  });
});
