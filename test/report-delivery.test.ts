/**
 * The report webhook: signed, retried with backoff while the receiver is down,
 * delivered once it is up — also across a restart — and given up in the end.
 * On SQLite and on PostgreSQL.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { signBody, verifySignature } from '../src/reports/webhook-signature.js';
import { ReportService, type ReportServiceOptions } from '../src/reports/report-service.js';
import { CallRepository } from '../src/store/call-repository.js';
import { DeliveryRepository } from '../src/store/delivery-repository.js';
import { openStore, type Store } from '../src/store/store.js';
import { attemptLog, callSummary, ORDER_CALL, stored, writeTranscript } from './helpers/reports.js';
import { closedPort, startReportReceiver, type ReportReceiver } from './helpers/report-receiver.js';
import { freshStoreLocation, storeKinds, type StoreKind, type TestStoreLocation } from './helpers/stores.js';

const logger = pino({ level: 'silent' });
const SECRET = 'whsec-test-0123456789';
/** Small enough that a retry comes within the test, large enough not to spin. */
const FAST_RETRY = { initialMs: 20, maxMs: 80 };
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Env {
  dir: string;
  location: TestStoreLocation;
  llm: ScriptedLlmServer;
  call: ReturnType<typeof callSummary>;
  /** The store at `location`, opened anew; closed after the test unless the test closes it. */
  open(): Promise<Store>;
  /** A service on the store at `location`, opened anew; both closed after the test unless the test closes them. */
  start(url: string, options?: Partial<ReportServiceOptions>): Promise<{ service: ReportService; store: Store; attempts: ReturnType<typeof attemptLog> }>;
}

async function environment(kind: StoreKind): Promise<Env> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-delivery-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  // No report.md: these tests are about the webhook, not the model.
  await mkdir(path.join(dir, 'prompts'));
  const llm = await startScriptedLlmServer({ script: () => ({ content: '{}' }) });
  cleanups.push(() => llm.close());
  const call = callSummary({ transcriptFile: await writeTranscript(dir, 'call-1', ORDER_CALL) });
  const location = await freshStoreLocation(kind);
  cleanups.push(() => location.remove());
  async function open(): Promise<Store> {
    const store = await openStore(location.location, logger);
    cleanups.push(() => store.close());
    return store;
  }
  return {
    dir,
    location,
    llm,
    call,
    open,
    async start(url, options = {}) {
      const store = await open();
      const attempts = attemptLog();
      const service = new ReportService({
        store,
        promptsDir: path.join(dir, 'prompts'),
        llm: { apiKey: 'test-key', baseURL: llm.baseURL, model: 'test-model' },
        webhook: { url, secret: SECRET },
        retry: FAST_RETRY,
        logger,
        onDeliveryAttempt: attempts.onAttempt,
        ...options,
      });
      cleanups.push(() => service.close());
      return { service, store, attempts };
    },
  };
}

async function receiver(port?: number): Promise<ReportReceiver> {
  const started = await startReportReceiver(SECRET, port);
  cleanups.push(() => started.close());
  return started;
}

describe.each(await storeKinds())('delivery on %s', (kind) => {
  test('the report is POSTed once, signed, with its delivery id and timestamp', async () => {
    const env = await environment(kind);
    const hook = await receiver();
    const { service, attempts } = await env.start(hook.url);
    service.callEnded(env.call);
    const delivered = await attempts.until((a) => a.status === 'delivered');

    const request = await hook.request(0);
    expect(request.verified).toBe(true);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.id).toBe(delivered.id);
    expect(Number(request.headers['x-hotline-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
    expect(request.headers['x-hotline-signature']).toBe(signBody(SECRET, Number(request.headers['x-hotline-timestamp']), request.body));
    const detail = await service.getCall('call-1');
    expect(request.body).toBe(detail?.report?.body);
    expect(JSON.parse(request.body)).toMatchObject({ version: 1, session_id: 'call-1', fields_status: 'skipped' });
    expect(detail?.deliveries).toEqual([
      expect.objectContaining({
        id: delivered.id,
        status: 'delivered',
        attempts: 1,
        url: hook.url,
        lastError: null,
        deliveredAt: expect.any(String),
      }),
    ]);
    expect(hook.received).toHaveLength(1);
  });

  test('receiver refusing connections, then 503, then up: delivered exactly once', async () => {
    const env = await environment(kind);
    const port = await closedPort();
    const { service, attempts } = await env.start(`http://127.0.0.1:${port}/hooks/hotline`);
    service.callEnded(env.call);
    const refused = await attempts.until((a) => a.status === 'retrying');
    expect(refused.error).toMatch(/ECONNREFUSED/);

    const hook = await receiver(port);
    hook.status = 503;
    const unavailable = await hook.request(0);
    expect(unavailable.verified).toBe(true);
    expect((await attempts.until((a) => a.error === 'HTTP 503')).status).toBe('retrying');

    hook.status = 204;
    const delivered = await attempts.until((a) => a.status === 'delivered');
    expect(delivered.id).toBe(refused.id);
    expect(hook.accepted(delivered.id)).toBe(1);
    expect(hook.received.every((r) => r.id === delivered.id && r.verified)).toBe(true);
    expect((await service.getCall('call-1'))?.deliveries).toEqual([
      expect.objectContaining({ status: 'delivered', attempts: attempts.attempts.length }),
    ]);
  });

  test('a pending delivery survives a restart and goes out once, at once', async () => {
    const env = await environment(kind);
    const hook = await receiver();
    hook.status = 503;
    // A long backoff: only the restart can make it go out within the test.
    const first = await env.start(hook.url, { retry: { initialMs: 60_000, maxMs: 60_000 } });
    first.service.callEnded(env.call);
    const failed = await first.attempts.until((a) => a.status === 'retrying');
    await first.service.close();
    await first.store.close();

    hook.status = 200;
    const second = await env.start(hook.url);
    const delivered = await second.attempts.until((a) => a.status === 'delivered');
    expect(delivered).toMatchObject({ id: failed.id, attempt: 2 });
    expect(hook.accepted(failed.id)).toBe(1);
    expect(hook.received).toHaveLength(2);
    // The new start made no report of its own: the call had one.
    expect((await second.service.getCall('call-1'))?.deliveries).toHaveLength(1);
  });

  test('a receiver that never answers is timed out and tried again', async () => {
    const env = await environment(kind);
    const hook = await receiver();
    hook.status = 0;
    const { service, attempts } = await env.start(hook.url, { webhook: { url: hook.url, secret: SECRET, timeoutMs: 50 } });
    service.callEnded(env.call);
    const timedOut = await attempts.until((a) => a.status === 'retrying');
    expect(timedOut.error).toBe('no answer within 50 ms');
    hook.status = 200;
    const delivered = await attempts.until((a) => a.status === 'delivered');
    expect(hook.accepted(delivered.id)).toBe(1);
  });

  /** A receiver answering 500 to every attempt, and a time limit of 60 ms: the delivery is given up. */
  async function givenUp() {
    const env = await environment(kind);
    const hook = await receiver();
    hook.status = 500;
    // The time limit runs from the call's end: a second is room for the report and a first attempt on a loaded
    // runner (60 ms was not: a CI run gave up after the first), and for dozens of retries 20 ms apart.
    const { service, attempts } = await env.start(hook.url, { retry: { initialMs: 10, maxMs: 20, giveUpAfterMs: 1_000 } });
    service.callEnded(env.call);
    const gaveUp = await attempts.until((a) => a.status === 'failed');
    return { hook, service, attempts, gaveUp };
  }

  test('still failing at the deadline: given up, and kept as failed', async () => {
    const { hook, service, gaveUp } = await givenUp();
    expect(gaveUp.error).toBe('HTTP 500');
    expect(gaveUp.attempt).toBeGreaterThan(1);
    expect((await service.getCall('call-1'))?.deliveries).toEqual([
      expect.objectContaining({ status: 'failed', attempts: gaveUp.attempt, lastError: 'HTTP 500', deliveredAt: null }),
    ]);
    expect(hook.received).toHaveLength(gaveUp.attempt);
  });

  test('given up, then sent again by hand once the receiver is back: delivered once, with a new time limit', async () => {
    const { hook, service, attempts, gaveUp } = await givenUp();
    expect(await service.redeliver('another-call')).toBe(0);

    // Still failing when sent again: retried from the new start, not given up at once for being old.
    const before = attempts.attempts.length;
    expect(await service.redeliver('call-1')).toBe(1);
    const gaveUpAgain = await attempts.until((a) => a.status === 'failed' && a.attempt > gaveUp.attempt);
    expect(attempts.attempts.slice(before).filter((a) => a.status === 'retrying').length).toBeGreaterThan(0);

    hook.status = 204;
    // Two requests at once (a double click): the delivery is queued again once, and sent once.
    expect((await Promise.all([service.redeliver(), service.redeliver('call-1')])).sort()).toEqual([0, 1]);
    const delivered = await attempts.until((a) => a.status === 'delivered');
    expect(delivered).toMatchObject({ id: gaveUp.id, attempt: gaveUpAgain.attempt + 1 });
    expect(hook.accepted(gaveUp.id)).toBe(1);
    expect(await service.redeliver()).toBe(0);
    expect((await service.getCall('call-1'))?.deliveries).toEqual([expect.objectContaining({ status: 'delivered', lastError: null })]);
  });

  test('two Hotlines on one store finding a call without a report at their start: one report, sent once', async () => {
    const env = await environment(kind);
    const hook = await receiver();
    const setUp = await env.open();
    await new CallRepository(setUp.db).save(stored({ ...env.call, endedAt: new Date().toISOString() }));
    // Two replicas, as Hotline runs them on one store: each named, and beating (a delivery another live
    // replica has claimed is not made due again by a start).
    const replicas = ['one', 'two'] as const;
    await setUp.db
      .insertInto('replicas')
      .values(replicas.map((id) => ({ id, instance: id, host: 'test', pid: process.pid, internal_url: null, started_at: new Date().toISOString(), heartbeat_at: Date.now() })))
      .execute();
    // Both look for calls without a report at once, and both make this one's.
    const [one, two] = await Promise.all([env.start(hook.url, { replica: replicas[0] }), env.start(hook.url, { replica: replicas[1] })]);
    await Promise.all([one.service.whenIdle(), two.service.whenIdle()]);
    const [delivery, ...more] = await new DeliveryRepository(setUp.db).forCall('call-1');
    expect(more).toEqual([]);
    await Promise.race([one.attempts, two.attempts].map((log) => log.until((a) => a.status === 'delivered')));
    // Closing waits for each one's worker: whatever either would still send has been sent.
    await Promise.all([one.service.close(), two.service.close()]);
    expect(hook.received.map((request) => request.id)).toEqual([delivery!.id]);
  });

  test('without a webhook, reports are stored and nothing is queued', async () => {
    const env = await environment(kind);
    const store = await env.open();
    const service = new ReportService({
      store,
      promptsDir: path.join(env.dir, 'prompts'),
      llm: { apiKey: 'k', baseURL: env.llm.baseURL, model: 'm' },
      logger,
    });
    cleanups.push(() => service.close());
    service.callEnded(env.call);
    await service.whenIdle();
    expect((await service.getCall('call-1'))?.report?.fieldsStatus).toBe('skipped');
    expect(await new DeliveryRepository(store.db).forSession('call-1')).toEqual([]);
    // Nothing to send again, and nowhere to send it: the admin API answers 409 for this.
    expect(await service.redeliver()).toBeUndefined();
  });
});

describe('verifySignature', () => {
  const body = '{"version":1}';
  const now = Date.parse('2026-11-22T03:06:00.000Z');
  const timestamp = Math.floor(now / 1000);
  const signature = signBody(SECRET, timestamp, body);

  test('accepts the signature of the body at its timestamp', () => {
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifySignature(SECRET, String(timestamp), body, signature, { now })).toBe(true);
    expect(verifySignature(SECRET, timestamp, body, signature, { now: now + 4 * 60_000 })).toBe(true);
  });

  test('rejects another secret, another body, another timestamp, a malformed header', () => {
    expect(verifySignature('other-secret', timestamp, body, signature, { now })).toBe(false);
    expect(verifySignature(SECRET, timestamp, `${body} `, signature, { now })).toBe(false);
    expect(verifySignature(SECRET, timestamp + 1, body, signature, { now })).toBe(false);
    expect(verifySignature(SECRET, timestamp, body, undefined, { now })).toBe(false);
    expect(verifySignature(SECRET, timestamp, body, signature.replace('sha256=', 'sha1='), { now })).toBe(false);
    expect(verifySignature(SECRET, timestamp, body, `${signature}00`, { now })).toBe(false);
    expect(verifySignature(SECRET, timestamp, body, signature.slice(0, -2), { now })).toBe(false);
    expect(verifySignature(SECRET, 'soon', body, signature, { now })).toBe(false);
  });

  test('rejects a timestamp more than 5 minutes old (a replay) or ahead', () => {
    expect(verifySignature(SECRET, timestamp, body, signature, { now: now + 5 * 60_000 + 1000 })).toBe(false);
    expect(verifySignature(SECRET, timestamp, body, signature, { now: now - 5 * 60_000 - 1000 })).toBe(false);
  });
});
