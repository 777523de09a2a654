/**
 * The knowledge base's embeddings, on each store: a real Hotline indexing a folder of documents,
 * its passages embedded by a scripted OpenAI-compatible `/embeddings` server that counts what it is
 * asked, and a fake voice service calling. The passages are embedded when the documents change,
 * once, and never while a caller waits; a lookup then also gives the passages nearest its best one.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino, type Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { FOUND_MARK } from '../src/call/knowledge-note.js';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

/** Passage A: what the test's question finds by its words. */
const DISPATCH = `# Dispatch

Parcels leave our warehouse Monday to Friday.
`;

/** Passage B: says what A says with none of its words (nor the question's), so only the vectors bring it. */
const ORDERS = `# Orders

Shipping: orders go out on weekdays.
`;

const RETURNS = `# Returns

## Time limit
Returns are accepted within 30 days with the receipt.

## Refunds
Refunds reach your account within 5 business days.
`;

const FAQ = `questions:
  - question: Do you sell gift cards?
    answer: Yes, gift cards of 25, 50 and 100 euros are sold in our shop.
  - question: Can I pay by card?
    answer: We take cards and cash.
`;

/** Finds passage A by its words (parcel, leave, warehouse), none of which B has. */
const DISPATCH_QUESTION = 'When do parcels leave your warehouse?';
const A_LINE = 'dispatch.md › Dispatch: Parcels leave our warehouse Monday to Friday.';
const B_LINE = 'orders.md › Orders: Shipping: orders go out on weekdays.';

const MODEL = 'test-embedding-model';
const BATCH = 4;

// ---------------------------------------------------------------------------------------------
// The scripted /embeddings server.

/** Words of one topic: a text's words found here count as the topic, so "parcels leave the warehouse" and "orders go out" are near. */
const TOPICS: Record<string, string> = Object.fromEntries(
  ['dispatch', 'parcels', 'leave', 'warehouse', 'monday', 'friday', 'shipping', 'orders', 'go', 'out', 'weekdays'].map((word) => [word, '#dispatch']),
);
const DIMENSIONS = 64;

/** A bag of words hashed into 64 dimensions, each word counted as its topic where it has one: texts sharing words, or a topic, are near. */
function vectorOf(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/\p{L}+|\d+/gu) ?? []) {
    const token = TOPICS[word] ?? word;
    vector[createHash('sha256').update(token).digest().readUInt32LE(0) % DIMENSIONS]! += 1;
  }
  return vector;
}

interface EmbeddingRequest {
  readonly model: string;
  readonly inputs: readonly string[];
  readonly authorization: string | undefined;
}

interface EmbeddingServer {
  readonly baseURL: string;
  /** Every request, answered or not, in the order they came. */
  readonly requests: EmbeddingRequest[];
  /** 'ok' answers vectors; 'fail' answers 500. */
  mode: 'ok' | 'fail';
  /** While set, requests wait unanswered until release(). */
  holding: boolean;
  /** Requests waiting for release(). */
  readonly held: number;
  release(): void;
  /** Resolves once `count` requests have arrived in all. */
  arrived(count: number): Promise<void>;
  close(): Promise<void>;
}

async function startEmbeddingServer(): Promise<EmbeddingServer> {
  const requests: EmbeddingRequest[] = [];
  const heldAnswers: (() => void)[] = [];
  const arrivals: { count: number; resolve: () => void }[] = [];

  const answer = (res: ServerResponse, body: { model: string; input: string | string[] }): void => {
    if (server.mode === 'fail') {
      // As OpenAI says when to try again: the SDK's retries need not slow the test down.
      res.writeHead(500, { 'content-type': 'application/json', 'retry-after-ms': '10' });
      res.end(JSON.stringify({ error: { message: 'the scripted embeddings server fails', type: 'server_error' } }));
      return;
    }
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    // Like many OpenAI-compatible servers (Ollama, LM Studio): floats, whatever encoding_format was asked for.
    const data = inputs.map((input, index) => ({ object: 'embedding', index, embedding: vectorOf(input) }));
    const tokens = inputs.reduce((sum, input) => sum + input.split(/\s+/).length, 0);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  };

  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input: string | string[] };
      requests.push({ model: body.model, inputs: typeof body.input === 'string' ? [body.input] : body.input, authorization: req.headers.authorization });
      for (const waiter of arrivals.filter((w) => requests.length >= w.count)) {
        arrivals.splice(arrivals.indexOf(waiter), 1);
        waiter.resolve();
      }
      if (server.holding) heldAnswers.push(() => answer(res, body));
      else answer(res, body);
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;

  const server: EmbeddingServer = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    mode: 'ok',
    holding: false,
    get held() {
      return heldAnswers.length;
    },
    release() {
      server.holding = false;
      for (const answerNow of heldAnswers.splice(0)) answerNow();
    },
    arrived(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => arrivals.push({ count, resolve }));
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  return server;
}

// ---------------------------------------------------------------------------------------------

/** The note the newest caller message of `request` carries, after the caller's words. */
function noteOf(request: ChatRequestBody): string {
  const last = request.messages.findLast((m) => m.role === 'user');
  const content = typeof last?.content === 'string' ? last.content : '';
  const at = content.indexOf('\n\n[');
  return at < 0 ? '' : content.slice(at + 2);
}

/** The passages of a note, without their numbers. */
function passagesOf(note: string): string[] {
  const lines = note.split('\n');
  expect(lines[0]).toBe(FOUND_MARK);
  return lines.slice(1).map((line) => line.replace(/^\(\d+\) /, ''));
}

/** What Hotline sends to be embedded for each stored passage (its heading, then its text), by source. */
async function storedInputs(env: TestHotline, source?: string): Promise<string[]> {
  const { rows } = await sql<{ source: string; heading: string; text: string }>`
    SELECT source, heading, text FROM knowledge_passages ORDER BY id`.execute(env.hotline.store.db);
  return rows.filter((row) => source === undefined || row.source === source).map((row) => (row.heading ? `${row.heading}\n${row.text}` : row.text));
}

/** Every stored passage has the vector the endpoint made of its own heading and text (normalised). */
async function expectOwnVectors(env: TestHotline): Promise<void> {
  const { rows } = await sql<{ heading: string; text: string; embedding: Uint8Array | null }>`
    SELECT heading, text, embedding FROM knowledge_passages ORDER BY id`.execute(env.hotline.store.db);
  for (const row of rows) {
    expect(row.embedding, row.text).not.toBeNull();
    const bytes = new Uint8Array(row.embedding!);
    const stored = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    const made = vectorOf(row.heading ? `${row.heading}\n${row.text}` : row.text);
    const norm = Math.hypot(...made);
    expect(stored.map((v) => v.toFixed(5)), row.text).toEqual(made.map((v) => (v / norm).toFixed(5)));
  }
}

const sorted = (values: readonly string[]): string[] => [...values].sort();

/** A pino logger writing its lines to `lines`. */
function arrayLogger(lines: { level: number; msg: string; [field: string]: unknown }[]): Logger {
  return pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
}

const WARN = 40;

describe.each(await storeKinds())('knowledge embeddings on %s', (kind) => {
  let folder: string;
  let store: TestStoreLocation;
  let embeddings: EmbeddingServer;
  let env: TestHotline | undefined;
  let client: FakeVoiceService | undefined;

  beforeEach(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'hotline-knowledge-'));
    await writeFile(path.join(folder, 'dispatch.md'), DISPATCH);
    await writeFile(path.join(folder, 'orders.md'), ORDERS);
    await writeFile(path.join(folder, 'returns.md'), RETURNS);
    await writeFile(path.join(folder, 'faq.yaml'), FAQ);
    store = await freshStoreLocation(kind);
    embeddings = await startEmbeddingServer();
  });

  afterEach(async () => {
    await stop();
    await embeddings.close();
    await store.remove();
    await rm(folder, { recursive: true, force: true });
  });

  async function stop(): Promise<void> {
    await client?.close();
    await env?.close();
    client = undefined;
    env = undefined;
  }

  /** Hotline on the test's store and folder, embedding through the scripted server unless `withEmbeddings` is false. */
  async function start(options: { withEmbeddings?: boolean; logger?: Logger } = {}): Promise<TestHotline> {
    const embeddingVars: Record<string, string> =
      options.withEmbeddings === false
        ? {}
        : {
            KNOWLEDGE_EMBEDDINGS_MODEL: MODEL,
            KNOWLEDGE_EMBEDDINGS_URL: embeddings.baseURL,
            KNOWLEDGE_EMBEDDINGS_API_KEY: 'embedding-key',
            KNOWLEDGE_EMBEDDINGS_BATCH: String(BATCH),
          };
    env = await startTestHotline(
      () => ({ content: 'Let me see.' }),
      { ...store.env, KNOWLEDGE: 'true', KNOWLEDGE_DIR: folder, ...embeddingVars },
      {},
      options.logger ? { logger: options.logger } : {},
    );
    return env;
  }

  async function call(): Promise<FakeVoiceService> {
    client = await FakeVoiceService.connect(env!.hotline.wsUrl);
    client.start();
    await client.nextOfType('speak');
    await client.whenQuiet();
    return client;
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

  /** Resolves once the index holds a new version of `file` (an indexing that changed nothing does not count). */
  async function indexedAgain(file: string, before: string | undefined): Promise<void> {
    const base = env!.hotline.knowledge!.base;
    const indexing = (): Promise<void> => new Promise((resolve) => base.onIndexed(resolve));
    let next = indexing();
    for (;;) {
      await next;
      // Listened for before the index is read: an indexing ending meanwhile is not missed.
      next = indexing();
      const source = (await base.status()).sources.find((s) => s.path === file);
      if (source && source.hash !== before) return;
    }
  }

  /** Replaces `file` of the folder at once: the watcher never sees it half written (which would index, and embed, it twice). */
  async function replaceFile(file: string, text: string): Promise<void> {
    const draft = path.join(await mkdtemp(path.join(tmpdir(), 'hotline-draft-')), file);
    await writeFile(draft, text);
    await rename(draft, path.join(folder, file));
    await rm(path.dirname(draft), { recursive: true, force: true });
  }

  test('every passage is embedded once at the start, in batches; a call of several turns makes no embedding request', async () => {
    const started = await start();
    await started.hotline.knowledge!.embeddings!.idle();

    const inputs = await storedInputs(started);
    expect(inputs).toHaveLength(6);
    expect(embeddings.requests).toHaveLength(Math.ceil(inputs.length / BATCH));
    expect(sorted(embeddings.requests.flatMap((r) => r.inputs))).toEqual(sorted(inputs));
    expect(embeddings.requests.every((r) => r.model === MODEL && r.authorization === 'Bearer embedding-key')).toBe(true);
    await expectOwnVectors(started);
    const { sources } = await started.hotline.knowledge!.base.status();
    expect(sources.map((s) => s.embedded)).toEqual(sources.map(() => MODEL));

    const asked = embeddings.requests.length;
    await call();
    expect(passagesOf(await ask(DISPATCH_QUESTION))).toContain(A_LINE);
    expect(passagesOf(await ask('How long do refunds take?'))[0]).toBe('returns.md › Returns › Refunds: Refunds reach your account within 5 business days.');
    expect(passagesOf(await ask('Do you sell gift cards?'))[0]).toMatch(/^faq\.yaml › Do you sell gift cards\?/);
    expect(passagesOf(await ask('And can I pay by card?'))).toContain('faq.yaml › Can I pay by card?: Can I pay by card? We take cards and cash.');
    // The caller's questions were looked up, and not one was embedded: the request count is where it was.
    expect(started.llm.requests.length).toBeGreaterThanOrEqual(4);
    expect(embeddings.requests).toHaveLength(asked);
    expect(started.hotline.knowledge!.embeddings!.requests).toBe(asked);
  });

  test("an edited document has its passages embedded again, once, and no other's; an unchanged restart embeds nothing", async () => {
    const started = await start();
    await started.hotline.knowledge!.embeddings!.idle();
    const first = embeddings.requests.length;
    const returns = (await started.hotline.knowledge!.base.status()).sources.find((s) => s.path === 'returns.md');

    const indexed = indexedAgain('returns.md', returns?.hash);
    await replaceFile('returns.md', `${RETURNS}\n## Exchanges\nAn item may be exchanged for another size within 30 days.\n`);
    await indexed;
    await started.hotline.knowledge!.embeddings!.idle();

    const edited = await storedInputs(started, 'returns.md');
    expect(edited).toHaveLength(3);
    const again = embeddings.requests.slice(first);
    expect(again).toHaveLength(Math.ceil(edited.length / BATCH));
    expect(sorted(again.flatMap((r) => r.inputs))).toEqual(sorted(edited));
    const { sources } = await started.hotline.knowledge!.base.status();
    expect(sources.map((s) => s.embedded)).toEqual(sources.map(() => MODEL));

    // The same documents, the same store: nothing to embed, and the neighbours are still there.
    await stop();
    const asked = embeddings.requests.length;
    const restarted = await start();
    await restarted.hotline.knowledge!.embeddings!.idle();
    expect(embeddings.requests).toHaveLength(asked);
    await call();
    expect(passagesOf(await ask(DISPATCH_QUESTION))).toEqual(expect.arrayContaining([A_LINE, B_LINE]));
    expect(embeddings.requests).toHaveLength(asked);
  });

  test("a question whose words find one passage also gets the passage nearest it by vector, which the words alone do not give", async () => {
    // The words alone first: passage A, and not B.
    await start({ withEmbeddings: false });
    await call();
    expect(passagesOf(await ask(DISPATCH_QUESTION))).toEqual([A_LINE]);
    await stop();
    expect(embeddings.requests).toHaveLength(0);

    // The same store with embeddings: A, and B, its neighbour.
    const started = await start();
    await started.hotline.knowledge!.embeddings!.idle();
    expect(embeddings.requests.length).toBeGreaterThan(0);
    await call();
    // The passage the words found first, then the one it brought: a neighbour never outranks the passage it came with.
    expect(passagesOf(await ask(DISPATCH_QUESTION))).toEqual([A_LINE, B_LINE]);
    // A question of other words is not given B: only the best passages' neighbours come along.
    expect(passagesOf(await ask('How long do refunds take?'))).not.toContain(B_LINE);
  });

  test('a document edited again while its passages are being embedded: each passage keeps the vector of its own text', async () => {
    const started = await start();
    await started.hotline.knowledge!.embeddings!.idle();
    const hashOf = async (file: string): Promise<string | undefined> =>
      (await started.hotline.knowledge!.base.status()).sources.find((s) => s.path === file)?.hash;

    embeddings.holding = true;
    const asked = embeddings.requests.length;
    let indexed = indexedAgain('returns.md', await hashOf('returns.md'));
    await replaceFile('returns.md', RETURNS.replace('30 days', '14 days'));
    await indexed;
    await embeddings.arrived(asked + 1);
    // The first edit's passages are at the endpoint when the second replaces them (on SQLite, under the same ids).
    indexed = indexedAgain('returns.md', await hashOf('returns.md'));
    await replaceFile('returns.md', RETURNS.replace('30 days', '60 days'));
    await indexed;
    embeddings.release();
    await started.hotline.knowledge!.embeddings!.idle();

    expect(await storedInputs(started, 'returns.md')).toContain('Returns › Time limit\nReturns are accepted within 60 days with the receipt.');
    await expectOwnVectors(started);
    const { sources } = await started.hotline.knowledge!.base.status();
    expect(sources.map((s) => s.embedded)).toEqual(sources.map(() => MODEL));
  });

  test('neighbours a stopped process did not get to compute are computed at the next start, without embedding again', async () => {
    const started = await start();
    await started.hotline.knowledge!.embeddings!.idle();
    // As a process stopped after the vectors were stored, before their neighbours were, leaves the store.
    await sql`UPDATE knowledge_passages SET neighbours = NULL`.execute(started.hotline.store.db);
    await stop();
    const asked = embeddings.requests.length;

    const restarted = await start();
    await restarted.hotline.knowledge!.embeddings!.idle();
    expect(embeddings.requests).toHaveLength(asked);
    await call();
    expect(passagesOf(await ask(DISPATCH_QUESTION))).toEqual(expect.arrayContaining([A_LINE, B_LINE]));
  });

  test('an endpoint that fails: the calls go on with the words alone, not waiting for it, and a warning is logged', async () => {
    const lines: { level: number; msg: string }[] = [];
    embeddings.mode = 'fail';
    embeddings.holding = true;
    const started = await start({ logger: arrayLogger(lines) });
    await embeddings.arrived(1);

    // The endpoint has not answered yet: the call is answered all the same, from the words.
    await call();
    expect(passagesOf(await ask(DISPATCH_QUESTION))).toEqual([A_LINE]);
    expect(embeddings.held).toBe(1);

    embeddings.release();
    await started.hotline.knowledge!.embeddings!.idle();
    const warnings = lines.filter((line) => line.level === WARN && /could not be embedded/.test(line.msg));
    expect(warnings).toHaveLength(1);
    expect(passagesOf(await ask(DISPATCH_QUESTION))).toEqual([A_LINE]);
    const { sources } = await started.hotline.knowledge!.base.status();
    expect(sources.map((s) => s.embedded)).toEqual(sources.map(() => undefined));

    // Back up: the next change has every passage embedded, the earlier ones too.
    embeddings.mode = 'ok';
    const failed = embeddings.requests.length;
    const faq = sources.find((s) => s.path === 'faq.yaml');
    const indexed = indexedAgain('faq.yaml', faq?.hash);
    await replaceFile('faq.yaml', `${FAQ}  - question: Do you deliver on Sundays?\n    answer: No.\n`);
    await indexed;
    await started.hotline.knowledge!.embeddings!.idle();
    expect(sorted(embeddings.requests.slice(failed).flatMap((r) => r.inputs))).toEqual(sorted(await storedInputs(started)));
    expect(passagesOf(await ask(DISPATCH_QUESTION))).toEqual(expect.arrayContaining([A_LINE, B_LINE]));
  });

  test('closing Hotline while the endpoint has not answered does not wait for it', async () => {
    const lines: { level: number; msg: string }[] = [];
    embeddings.holding = true;
    await start({ logger: arrayLogger(lines) });
    await embeddings.arrived(1);
    const closing = Date.now();
    await stop();
    // The SDK's own timeout is a minute: closing must not wait for it.
    expect(Date.now() - closing).toBeLessThan(5_000);
    expect(embeddings.held).toBe(1);
    // Closing is not the endpoint failing.
    expect(lines.filter((line) => line.level === WARN && /could not be embedded/.test(line.msg))).toEqual([]);
  });
});
