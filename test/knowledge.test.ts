/**
 * Answers from the business's documents, on each store: a real Hotline indexing a folder of
 * documents, a fake voice service calling it, and the scripted LLM server recording what each
 * request carried after the caller's words.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { FOUND_MARK, NOTHING_MARK } from '../src/call/knowledge-note.js';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';
import { CallReportSchema } from '../src/reports/report-builder.js';
import { CallRepository } from '../src/store/call-repository.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { textSink } from './helpers/text-sink.js';
import { dashboardCallPage } from './helpers/tool-calls.js';
import { DELIVERY, FAQ } from './helpers/knowledge-documents.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';


const GERMAN = `# Rücksendung

## Fristen
Eine Rücksendung ist innerhalb von 30 Tagen mit Kassenbon möglich.
`;

const ADMIN = 'knowledge-test-admin-token';

/** The note the newest caller message of `request` carries, after the caller's words. */
function noteOf(request: ChatRequestBody): string {
  const last = request.messages.findLast((m) => m.role === 'user');
  const content = typeof last?.content === 'string' ? last.content : '';
  const at = content.indexOf('\n\n[');
  return at < 0 ? '' : content.slice(at + 2);
}

describe.each(await storeKinds())('knowledge on %s', (kind) => {
  let folder: string;
  let store: TestStoreLocation;
  let env: TestHotline | undefined;
  let client: FakeVoiceService | undefined;

  beforeEach(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'hotline-knowledge-'));
    await writeFile(path.join(folder, 'delivery.md'), DELIVERY);
    await writeFile(path.join(folder, 'faq.yaml'), FAQ);
    await mkdir(path.join(folder, 'de'));
    await writeFile(path.join(folder, 'de', 'ruecksendung.md'), GERMAN);
    store = await freshStoreLocation(kind);
  });

  afterEach(async () => {
    await client?.close();
    await env?.close();
    client = undefined;
    env = undefined;
    await store.remove();
    await rm(folder, { recursive: true, force: true });
  });

  async function start(logger?: Logger): Promise<{ env: TestHotline; client: FakeVoiceService }> {
    env = await startTestHotline(() => ({ content: 'Let me see.' }), { ...store.env, KNOWLEDGE: 'true', KNOWLEDGE_DIR: folder }, {}, logger ? { logger } : {});
    client = await FakeVoiceService.connect(env.hotline.wsUrl);
    client.start();
    await client.nextOfType('speak');
    await client.whenQuiet();
    return { env, client };
  }

  /** The caller says `words`; the note their turn's request carried. */
  async function ask(words: string): Promise<string> {
    const before = env!.llm.requests.length;
    client!.say(words);
    await client!.nextOfType('speak');
    await client!.whenQuiet();
    const request = env!.llm.requests[before];
    expect(request, `a request for "${words}"`).toBeDefined();
    return noteOf(request!.body);
  }

  test('a question answered by a Markdown section and one by an FAQ entry: the right passage reaches the request, after the words', async () => {
    await start();
    const delivery = await ask('Do you deliver to Potsdam?');
    expect(delivery.split('\n')[0]).toBe(FOUND_MARK);
    expect(delivery.split('\n')[1]).toBe('(1) delivery.md › Delivery › Delivery areas: We deliver within Berlin and to Potsdam. Delivery costs 4.90 euros, free from 50 euros.');
    const refund = await ask('How long until I get my refund?');
    expect(refund.split('\n')[1]).toBe('(1) faq.yaml › How long does a refund take?: How long does a refund take? Refunds reach your account within 5 business days.');
    // The caller's words stay as they were said, first; the earlier turn's note is gone from the history.
    const request = env!.llm.requests.at(-1)!.body;
    const users = request.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users[0]).toBe('Do you deliver to Potsdam?');
    expect(String(users[1])).toMatch(/^How long until I get my refund\?\n\n\[From the business's documents/);
  });

  test('a German question with an inflected word finds its German passage', async () => {
    await start();
    const note = await ask('Wie lange habe ich Zeit für Rücksendungen?');
    expect(note.split('\n')[1]).toMatch(/^\(1\) de\/ruecksendung\.md › Rücksendung › Fristen: Eine Rücksendung ist innerhalb von 30 Tagen/);
  });

  test('a question nothing answers gives the "not found" instruction, not stray passages', async () => {
    await start();
    expect(await ask('What is the capital of France?')).toBe(NOTHING_MARK);
    // Words with nothing to look for ("yes, please") are told the same.
    expect(await ask('Yes, please.')).toBe(NOTHING_MARK);
  });

  test('a follow-up is searched with the exchange before it', async () => {
    await start();
    await ask('Do you deliver to Potsdam?');
    const note = await ask('And which days?');
    expect(note).toContain('delivery.md › Delivery › Delivery days: Deliveries go out Monday to Friday.');
  });

  test('a document edited during a call is found on the next turn; a broken file keeps its last good version', async () => {
    const log = textSink();
    const { env } = await start(pino({ level: 'warn' }, log.stream));
    expect(await ask('Do you deliver to Leipzig?')).not.toContain('Leipzig');
    const indexed = new Promise<void>((resolve) => env.hotline.knowledge!.base.onIndexed(resolve));
    await writeFile(path.join(folder, 'delivery.md'), DELIVERY.replace('and to Potsdam', 'to Potsdam and to Leipzig'));
    await indexed;
    expect(await ask('Do you deliver to Leipzig?')).toContain('We deliver within Berlin to Potsdam and to Leipzig.');

    const reindexed = new Promise<void>((resolve) => env.hotline.knowledge!.base.onIndexed(resolve));
    await writeFile(path.join(folder, 'faq.yaml'), `${FAQ}  - question: [unclosed\n`);
    await reindexed;
    const status = await env.hotline.knowledge!.base.status();
    expect(status.problems).toEqual([{ file: 'faq.yaml', line: expect.any(Number) as number, message: expect.any(String) as string }]);
    expect(status.problems[0]!.line).toBeGreaterThanOrEqual(6);
    const warning = log.text().split('\n').find((line) => line.includes('faq.yaml'));
    expect(JSON.parse(warning!)).toMatchObject({ file: 'faq.yaml', msg: expect.stringMatching(/^knowledge file faq\.yaml line \d+ cannot be read; its last good version stays in use$/) as string });
    expect(await ask('How long does a refund take?')).toContain('Refunds reach your account within 5 business days.');
  });

  test("the passages given, and the one the reply drew on, are on the turn's record, in the transcript, the report and the call's story", async () => {
    env = await startTestHotline(
      (request) => ({ content: noteOf(request).includes('Potsdam') ? 'Yes, we deliver to Potsdam; delivery costs 4.90 euros.' : 'Let me see.' }),
      { ...store.env, KNOWLEDGE: 'true', KNOWLEDGE_DIR: folder, ADMIN_TOKEN: ADMIN },
    );
    client = await FakeVoiceService.connect(env.hotline.wsUrl);
    client.start();
    await client.nextOfType('speak');
    await client.whenQuiet();
    client.say('Do you deliver to Potsdam?');
    expect((await client.nextOfType('speak')).text).toMatch(/^Yes, we deliver to Potsdam/);
    await client.whenQuiet();
    client.end();
    await client.closed;
    await env.hotline.registry.whenRecorded();
    await env.hotline.records.settled();
    const rows = new CallRepository(env.hotline.store.db, { owner: 'test', dialect: env.hotline.store.dialect });
    const stored = await rows.latestOfSession(client.sessionId);
    const turn = stored!.record.turns.find((t) => t.knowledge);
    expect(turn?.knowledge?.passages[0]).toMatchObject({ source: 'delivery.md', heading: 'Delivery › Delivery areas', line: 3, used: true });
    const lines = (await readFile(stored!.record.transcriptFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { text: string; passages?: string[] });
    expect(lines.find((line) => line.text === 'knowledge')?.passages?.[0]).toBe('delivery.md › Delivery › Delivery areas, line 3');
    expect(lines.find((line) => line.text === 'knowledge_used')?.passages).toEqual(['delivery.md › Delivery › Delivery areas, line 3']);

    await env.hotline.reports.whenIdle();
    const report = CallReportSchema.parse(JSON.parse((await env.hotline.reports.getCall(client.sessionId))!.report!.body));
    expect(report.turns.each.find((t) => t.knowledge)?.knowledge?.[0]).toMatchObject({ source: 'delivery.md', line: 3, page: null, used: true });

    const story = await dashboardCallPage(env, stored!.record.callId, ADMIN);
    const section = story.slice(story.indexOf('<section id="knowledge">'), story.indexOf('</section>', story.indexOf('<section id="knowledge">')));
    expect(section).toContain('From the documents');
    expect(section).toMatch(/<li class="used"><code>delivery\.md<\/code> › Delivery › Delivery areas, line 3 <span class="muted">score [\d.]+<\/span> · <strong>used<\/strong><\/li>/);
    // Given too (it says "deliver"), but not drawn on.
    expect(section).toMatch(/<li class=""><code>faq\.yaml<\/code> › Do you ship abroad\?, line 4 <span class="muted">score [\d.]+<\/span><\/li>/);
  });

  test('the model takes a second look with search_knowledge, offered beside the call tools, and reads the passages it finds', async () => {
    env = await startTestHotline(
      (request) => {
        const result = request.messages.findLast((m) => m.role === 'tool');
        if (result) return { content: typeof result.content === 'string' && result.content.includes('5 business days') ? 'Within five business days.' : 'Not found.' };
        return { toolCalls: [{ name: 'search_knowledge', arguments: JSON.stringify({ query: 'refund duration' }) }] };
      },
      { ...store.env, KNOWLEDGE: 'true', KNOWLEDGE_DIR: folder },
    );
    client = await FakeVoiceService.connect(env.hotline.wsUrl);
    client.start();
    await client.nextOfType('speak');
    await client.whenQuiet();
    client.say('What about my money back?');
    expect((await client.nextOfType('speak')).text).toBe('Within five business days.');
    const first = env.llm.requests.at(-2)!.body;
    expect(first.tools?.map((t) => t.function.name)).toContain('search_knowledge');
    const tool = env.llm.requests.at(-1)!.body.messages.findLast((m) => m.role === 'tool');
    expect(tool?.content).toBe('(1) faq.yaml › How long does a refund take?, line 2: How long does a refund take? Refunds reach your account within 5 business days.');
  });

  test('an empty folder costs nothing: no note after the words, no search_knowledge offered; its first document turns both on', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'hotline-knowledge-empty-'));
    try {
      env = await startTestHotline(() => ({ content: 'Let me see.' }), { ...store.env, KNOWLEDGE: 'true', KNOWLEDGE_DIR: empty });
      client = await FakeVoiceService.connect(env.hotline.wsUrl);
      client.start();
      await client.nextOfType('speak');
      await client.whenQuiet();
      expect(await ask('Do you deliver to Potsdam?')).toBe('');
      expect(env.llm.requests.at(-1)!.body.tools?.map((t) => t.function.name)).not.toContain('search_knowledge');
      const indexed = new Promise<void>((resolve) => env!.hotline.knowledge!.base.onIndexed(resolve));
      await writeFile(path.join(empty, 'delivery.md'), DELIVERY);
      await indexed;
      expect(await ask('Do you deliver to Potsdam?')).toContain('delivery.md › Delivery › Delivery areas');
      expect(env.llm.requests.at(-1)!.body.tools?.map((t) => t.function.name)).toContain('search_knowledge');
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  // Only PostgreSQL can be made to hold a search: SQLite's readers never wait for a writer.
  test.runIf(kind === 'postgres')('a search the database holds up is given up after a moment: the turn goes on, told nothing matched', async () => {
    await start();
    const locker = new pg.Client({ connectionString: store.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE knowledge_passages IN ACCESS EXCLUSIVE MODE');
      expect(await ask('Do you deliver to Potsdam?')).toBe(NOTHING_MARK);
      await locker.query('ROLLBACK');
      expect(await ask('Do you deliver to Potsdam?')).toContain('delivery.md › Delivery › Delivery areas');
    } finally {
      await locker.end();
    }
  });

  // Replicas share a store on PostgreSQL only: a SQLite file is one Hotline's.
  test.runIf(kind === 'postgres')('two replicas on one store index the folder once, and each finds the edit after it', async () => {
    const script = () => ({ content: 'Let me see.' });
    const vars = { ...store.env, KNOWLEDGE: 'true', KNOWLEDGE_DIR: folder };
    // Started together: both compare the folder with the one index at once.
    const [first, second] = await Promise.all([startTestHotline(script, { ...vars, REPLICA_ID: 'one' }), startTestHotline(script, { ...vars, REPLICA_ID: 'two' })]);
    try {
      const counts = await Promise.all([first, second].map(async (one) => (await one.hotline.knowledge!.base.status()).passages));
      expect(counts[0]).toBe(counts[1]);
      const { sources } = await second.hotline.knowledge!.base.status();
      expect(sources.map((s) => [s.path, s.passages])).toEqual([
        ['de/ruecksendung.md', 1],
        ['delivery.md', 2],
        ['faq.yaml', 2],
      ]);
      // A replica may sync on the watcher's first event while the file is still being written, or find the
      // other replica's write under way: each is waited for until one of its syncs finds the edit.
      const findsEdit = async (one: TestHotline): Promise<void> => {
        const base = one.hotline.knowledge!.base;
        let syncs = 0;
        let wake = (): void => {};
        base.onIndexed(() => {
          syncs += 1;
          wake();
        });
        for (let seen = 0; ; seen = syncs) {
          if (syncs === seen) await new Promise<void>((resolve) => (wake = resolve));
          if ((await base.search('Do you deliver to Leipzig?'))[0]?.text.includes('Leipzig')) return;
        }
      };
      const edited = Promise.all([first, second].map(findsEdit));
      await writeFile(path.join(folder, 'delivery.md'), DELIVERY.replace('and to Potsdam', 'to Potsdam and to Leipzig'));
      await edited;
      for (const one of [first, second]) {
        const found = await one.hotline.knowledge!.base.search('Do you deliver to Leipzig?');
        expect(found[0]?.text).toContain('Leipzig');
        expect((await one.hotline.knowledge!.base.status()).passages).toBe(5);
      }
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
