/**
 * A language per call, over both transports: the caller's language from their words, the number
 * they dialled, or the request that placed the call; the switch mid-call; what the recogniser is
 * told; the business's names said its way inside a streamed sentence; every action as the
 * production service takes it.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, afterAll, describe, expect, test } from 'vitest';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';
import { ActionSchema, type Action } from '../src/protocol/actions.js';
import { CallReportSchema } from '../src/reports/report-builder.js';
import { CallRepository } from '../src/store/call-repository.js';
import { startFakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { FakeVoiceService, type ReceivedAction } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';
import { dashboardCallPage } from './helpers/tool-calls.js';

const GERMAN_VOICE = { provider: 'azure', language: 'de-DE', voice: 'de-DE-KatjaNeural' } as const;
const TURKISH_VOICE = { provider: 'azure', language: 'tr-TR', voice: 'tr-TR-EmelNeural' } as const;
const GERMAN_LINE = '4930123456789';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hotline-languages-'));
  const write = async (file: string, text: string): Promise<void> => {
    await mkdir(path.dirname(path.join(folder, file)), { recursive: true });
    await writeFile(path.join(folder, file), text);
  };
  await write('system.md', 'You are the assistant of a coffee machine shop. [prompts: en]\n');
  await write('greeting.md', 'Hello, this is the coffee shop. How can I help?\n');
  await write('outbound-greeting.md', 'Hello {{name|there}}, the coffee shop calling.\n');
  await write('vocabulary.txt', '# names\nEspressiva\nMarktstraße\n');
  await write('pronunciations.yaml', 'Espressiva: Espresso Eva\n');
  await write('languages.yaml', `default: en\ndetect: true\nlines:\n  "${GERMAN_LINE}": de\n`);
  await write('de/system.md', `---\ntts: ${JSON.stringify(GERMAN_VOICE)}\n---\nDu bist der Assistent eines Kaffeemaschinenladens. [prompts: de]\n`);
  await write('de/greeting.md', 'Hallo, hier ist der Kaffeeladen. Wie kann ich helfen?\n');
  await write('de/vocabulary.txt', 'Entkalker\n');
  await write('tr/system.md', `---\ntts: ${JSON.stringify(TURKISH_VOICE)}\n---\nBir kahve makinesi dükkanının asistanısın. [prompts: tr]\n`);
  await write('tr/outbound-greeting.md', 'Merhaba {{name|}}, kahve dükkanından arıyoruz.\n');
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** The model answers in the language of the system prompt it was given, and repeats the shop's product name. */
function answerInPromptLanguage(request: ChatRequestBody): { content: string } {
  const system = String(request.messages.find((m) => m.role === 'system')?.content ?? '');
  const language = /\[prompts: (\w+)\]/.exec(system)?.[1] ?? '?';
  const said = lastUserText(request);
  return { content: `(${language}) Our Espressiva is in stock. You said: ${said}` };
}

const ON = { LANGUAGES: 'true', CONFIGURE_TRANSCRIPTION: 'true' };

let env: TestHotline | undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  if (env) {
    expect(env.llm.requests.map((r) => r.validationError).filter(Boolean)).toEqual([]);
    await env.close();
  }
  env = undefined;
});

/** Every action as the production service's schema takes it: strict objects, its fields only. */
function valid(actions: readonly object[]): void {
  for (const action of actions) {
    // What the fake service notes beside each action is its own, not the action's.
    const { receivedAt: _noted, ...sent } = action as { receivedAt?: number };
    expect(ActionSchema.safeParse(sent).error).toBeUndefined();
  }
}

async function start(extra: Record<string, string> = {}, tokenDelayMs = 1): Promise<TestHotline> {
  env = await startTestHotline(answerInPromptLanguage, { PROMPTS_DIR: folder, ...ON, ...extra }, { ttftMs: 1, tokenDelayMs });
  return env;
}

/** A webhook call, answered one event at a time; ACTION_ARRAYS decides whether one answer may carry several actions. */
function webhookCaller(url: string, id = randomUUID()) {
  const session = { id, account_id: 'acc', phone_number: '4930123456', direction: 'inbound' as const, from_phone_number: '4915112345678' };
  const received: Action[] = [];
  const post = async (event: Record<string, unknown>): Promise<Action[]> => {
    const res = await fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
    const text = await res.text();
    const body: unknown = text ? JSON.parse(text) : undefined;
    const actions = (body === undefined ? [] : Array.isArray(body) ? body : [body]) as Action[];
    received.push(...actions);
    return actions;
  };
  return {
    id,
    received,
    start: (to = '4930123456') => post({ type: 'session_start', session: { ...session, to_phone_number: to } }),
    say: (text: string) => post({ type: 'user_speak', session: { id }, text }),
    spoke: (text: string) => post({ type: 'assistant_speak', session: { id }, text, duration_ms: 900, speech_started_at: Date.now() }),
    ended: () => post({ type: 'assistant_speech_ended', session: { id } }),
    end: () => post({ type: 'session_end', session: { id }, reason: 'hangup' }),
  };
}

const configures = (actions: readonly { type: string }[]) =>
  actions.filter((a): a is Extract<Action, { type: 'configure_transcription' }> => a.type === 'configure_transcription');

describe('a language per call over the WebSocket', () => {
  test('a German caller on an English default: German prompts, voice and transcription from their first reply; the record, transcript, report and story say de', async () => {
    const { hotline } = await start({ ADMIN_TOKEN: 'admin-secret-languages' });
    const client = await FakeVoiceService.connect(hotline.wsUrl);
    cleanups.push(() => client.close());
    client.start();
    // The recogniser is told first: English, then German to switch to, and the default folder's vocabulary.
    const first = await client.next();
    expect(first).toMatchObject({ type: 'configure_transcription', languages: ['en-US', 'de-DE', 'tr-TR'], custom_vocabulary: ['Espressiva', 'Marktstraße'] });
    const greeting = await client.nextOfType('speak');
    expect(greeting.text).toBe('Hello, this is the coffee shop. How can I help?');
    expect(greeting.tts).toBeUndefined();
    await client.whenQuiet();

    client.say('Guten Tag, ich möchte wissen, ob Sie morgen geöffnet haben.');
    const configure = await client.nextOfType('configure_transcription');
    expect(configure).toMatchObject({ languages: ['de-DE', 'en-US', 'tr-TR'], custom_vocabulary: ['Entkalker', 'Espressiva', 'Marktstraße'] });
    const reply = await client.nextOfType('speak');
    // The German system prompt reached the model, the German voice reads it, and the name is said the shop's way.
    expect(reply.text).toBe('(de) Our Espresso Eva is in stock.');
    expect(reply.tts).toEqual(GERMAN_VOICE);
    // Told before the reply it is for.
    expect(client.actions.indexOf(configure)).toBeLessThan(client.actions.indexOf(reply));
    await client.whenQuiet();
    valid(client.actions);
    client.end();
    await client.close();

    await hotline.registry.whenRecorded();
    await hotline.records.settled();
    const rows = new CallRepository(hotline.store.db, { owner: 'test', dialect: hotline.store.dialect });
    const stored = await rows.latestOfSession(client.sessionId);
    expect(stored?.record.language).toBe('de');
    const lines = (await readFile(stored!.record.transcriptFile, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.text === 'language')).toEqual([
      expect.objectContaining({ language: 'en', chosen_by: 'default' }),
      expect.objectContaining({ language: 'de', chosen_by: 'detected', from: 'en' }),
    ]);
    // The history keeps the words as written, not as they are said.
    expect(lines.find((l) => l.role === 'assistant' && String(l.text).includes('Espress'))?.text).toMatch(/Espressiva/);
    await hotline.reports.whenIdle();
    const report = CallReportSchema.parse(JSON.parse((await hotline.reports.getCall(client.sessionId))!.report!.body));
    expect(report.language).toBe('de');
    const story = await dashboardCallPage(env!, stored!.record.callId, 'admin-secret-languages');
    expect(story).toContain('<dt>Language</dt><dd class="language">German <span class="muted">(de)</span></dd>');
    // The dashboard's start and the report's wait make this the longest test of the file.
  }, 30_000);

  test('a caller switching mid-call is answered in the new language on the next turn, and back again', async () => {
    const { hotline } = await start();
    const client = await FakeVoiceService.connect(hotline.wsUrl);
    cleanups.push(() => client.close());
    client.start();
    await client.nextOfType('speak');
    await client.whenQuiet();
    /** The first speak of the answer to `words`. */
    const ask = async (words: string): Promise<ReceivedAction> => {
      const from = client.actions.length;
      client.say(words);
      await client.next((a) => a.type === 'speak' && client.actions.indexOf(a) >= from);
      await client.whenQuiet();
      return client.actions.slice(from).find((a) => a.type === 'speak')!;
    };
    expect((await ask('What time do you open tomorrow morning?')).text).toBe('(en) Our Espresso Eva is in stock.');
    const german = await ask('Entschuldigung, können wir bitte auf Deutsch weitersprechen?');
    expect(german).toMatchObject({ text: '(de) Our Espresso Eva is in stock.', tts: GERMAN_VOICE });
    // A word or two says nothing about a language: the call stays where it is.
    expect((await ask('Okay.')).text).toBe('(de) Our Espresso Eva is in stock.');
    const back = await ask('Sorry, could we please go back to English, my German is not very good?');
    expect(back.text).toBe('(en) Our Espresso Eva is in stock.');
    expect(back.tts).toBeUndefined();
    expect(configures(client.actions).map((c) => c.languages)).toEqual([['en-US', 'de-DE', 'tr-TR'], ['de-DE', 'en-US', 'tr-TR'], ['en-US', 'de-DE', 'tr-TR']]);
    valid(client.actions);
  });

  test('a name said its way inside a streamed sentence: the sentence leaves while the model is still writing the next', async () => {
    const { hotline, llm } = await start({}, 15);
    const client = await FakeVoiceService.connect(hotline.wsUrl);
    cleanups.push(() => client.close());
    client.start();
    await client.nextOfType('speak');
    await client.whenQuiet();
    client.say('Is the Espressiva machine available in black, and how long is the warranty on it exactly?');
    const first = await client.nextOfType('speak');
    const request = llm.requests.at(-1)!;
    let streaming = true;
    void request.ended.then(() => (streaming = false));
    await Promise.resolve();
    expect(first.text).toBe('(en) Our Espresso Eva is in stock.');
    // Sent with its sentence, not after the reply: the rest was still being written.
    expect(streaming).toBe(true);
    expect((await client.nextOfType('speak')).text).toMatch(/^You said: Is the Espresso Eva machine available/);
    valid(client.actions);
  });

  test('a call to a German line starts in German: its greeting, voice and recogniser', async () => {
    const { hotline } = await start();
    const client = await FakeVoiceService.connect(hotline.wsUrl);
    cleanups.push(() => client.close());
    client.start({ to_phone_number: GERMAN_LINE });
    expect(await client.next()).toMatchObject({ type: 'configure_transcription', languages: ['de-DE', 'en-US', 'tr-TR'] });
    expect(await client.nextOfType('speak')).toMatchObject({ text: 'Hallo, hier ist der Kaffeeladen. Wie kann ich helfen?', tts: GERMAN_VOICE });
    valid(client.actions);
  });

  test('LANGUAGES=false: the default folder for everyone, the vocabulary still told; CONFIGURE_TRANSCRIPTION=false: nothing but speaks', async () => {
    const { hotline } = await start({ LANGUAGES: 'false' });
    const client = await FakeVoiceService.connect(hotline.wsUrl);
    cleanups.push(() => client.close());
    client.start({ to_phone_number: GERMAN_LINE });
    const first = await client.next();
    expect(first).toMatchObject({ type: 'configure_transcription', session_id: client.sessionId, custom_vocabulary: ['Espressiva', 'Marktstraße'] });
    expect(first).not.toHaveProperty('languages');
    expect((await client.nextOfType('speak')).text).toBe('Hello, this is the coffee shop. How can I help?');
    await client.whenQuiet();
    client.say('Guten Tag, ich möchte wissen, ob Sie morgen geöffnet haben.');
    expect((await client.nextOfType('speak')).text).toBe('(en) Our Espresso Eva is in stock.');
    await env!.close();
    env = undefined;

    const quiet = await start({ CONFIGURE_TRANSCRIPTION: 'false' });
    const other = await FakeVoiceService.connect(quiet.hotline.wsUrl);
    cleanups.push(() => other.close());
    other.start();
    expect((await other.next()).type).toBe('speak');
    await other.whenQuiet();
    other.say('Guten Tag, ich möchte wissen, ob Sie morgen geöffnet haben.');
    expect(await other.nextOfType('speak')).toMatchObject({ text: '(de) Our Espresso Eva is in stock.', tts: GERMAN_VOICE });
    expect(configures(other.actions)).toEqual([]);
  });

  test('a campaign contact with language: tr is greeted in Turkish, in a Turkish voice', async () => {
    const api = await startFakeAiFlowApi({ token: 'platform-token', flows: { 'flow-1': { phoneNumber: true } } });
    cleanups.push(() => api.close());
    const { hotline } = await start({
      ADMIN_TOKEN: 'admin-secret-languages',
      AIFLOW_API_URL: api.url,
      AIFLOW_ACCESS_TOKEN: 'platform-token',
      AIFLOW_ID: 'flow-1',
      AIFLOW_BILLING_DEVICE: 'dev-1',
    });
    const number = '491511234567';
    const res = await fetch(`${hotline.url}/api/campaigns`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-secret-languages', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'turkish', contacts: [{ phone: number, name: 'Ayşe', language: 'tr' }], answer_timeout_seconds: 60 }),
    });
    expect(res.status).toBe(201);
    await hotline.campaigns.settled();
    while (api.calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const service = await FakeVoiceService.connect(hotline.wsUrl);
    cleanups.push(() => service.close());
    service.start({ direction: 'outbound', to_phone_number: number, from_phone_number: '4930123456' });
    expect(await service.next()).toMatchObject({ type: 'configure_transcription', languages: ['tr-TR', 'en-US', 'de-DE'] });
    expect(await service.nextOfType('speak')).toMatchObject({ text: 'Merhaba Ayşe, kahve dükkanından arıyoruz.', tts: TURKISH_VOICE });
    valid(service.actions);
  });
});

describe('a language per call over the webhook', () => {
  test('without arrays the greeting is the first answer and the recogniser is told in an answer that would carry nothing; a German caller is answered in German', async () => {
    const { hotline } = await start();
    const c = webhookCaller(hotline.url);
    expect(await c.start()).toEqual([expect.objectContaining({ type: 'speak', text: 'Hello, this is the coffee shop. How can I help?' })]);
    expect(await c.spoke('Hello, this is the coffee shop. How can I help?')).toEqual([
      { type: 'configure_transcription', session_id: c.id, languages: ['en-US', 'de-DE', 'tr-TR'], custom_vocabulary: ['Espressiva', 'Marktstraße'] },
    ]);
    expect(await c.ended()).toEqual([]);
    const reply = await c.say('Guten Tag, ich möchte wissen, ob Sie morgen geöffnet haben.');
    // The reply is not held back behind the recogniser's settings: those follow in the next answer with room.
    expect(reply).toEqual([expect.objectContaining({ type: 'speak', text: '(de) Our Espresso Eva is in stock.', tts: GERMAN_VOICE })]);
    expect(await c.spoke('(de) Our Espresso Eva is in stock.')).toEqual([expect.objectContaining({ type: 'configure_transcription', languages: ['de-DE', 'en-US', 'tr-TR'] })]);
    valid(c.received);
    await c.end();
  });

  test('with arrays the recogniser is told in the same answer, before the line it is for', async () => {
    const { hotline } = await start({ ACTION_ARRAYS: 'webhook' });
    const c = webhookCaller(hotline.url);
    const greeting = await c.start(GERMAN_LINE);
    expect(greeting.map((a) => a.type)).toEqual(['configure_transcription', 'speak']);
    expect(greeting[1]).toMatchObject({ text: 'Hallo, hier ist der Kaffeeladen. Wie kann ich helfen?', tts: GERMAN_VOICE });
    await c.spoke('Hallo, hier ist der Kaffeeladen. Wie kann ich helfen?');
    await c.ended();
    const reply = await c.say('Sorry, could we please speak English, my German is not very good?');
    expect(reply.map((a) => a.type)).toEqual(['configure_transcription', 'speak']);
    expect(reply[1]).toMatchObject({ text: '(en) Our Espresso Eva is in stock.' });
    valid(c.received);
    await c.end();
  });
});
