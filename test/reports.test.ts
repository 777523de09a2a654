/**
 * A report of every call: the call's row first, then the model's summary
 * and fields from the transcript — validated, retried once, or given up
 * without losing the report. On SQLite and on PostgreSQL.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { demoScript } from '../src/demo/demo-script.js';
import { startScriptedLlmServer, type Script, type ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { redactorOf } from '../src/privacy/redactor-of.js';
import { CallReportSchema, type CallReport } from '../src/reports/report-builder.js';
import { ReportService, type ReportServiceOptions } from '../src/reports/report-service.js';
import { readTranscriptLines } from '../src/reports/transcript-lines.js';
import { renderTranscript } from '../src/reports/transcript-text.js';
import { CallRepository } from '../src/store/call-repository.js';
import type { Store } from '../src/store/store.js';
import { callSummary, ORDER_CALL, stored, writeTranscript } from './helpers/reports.js';
import { freshStore, storeKinds, type StoreKind } from './helpers/stores.js';

const logger = pino({ level: 'silent' });
const SHIPPED_REPORT = path.resolve('prompts/report.md');
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ANSWER = {
  summary: 'A caller asked where order 4711 is and wants a callback.',
  callback_wanted: true,
  customer_number: 'K 17',
  sentiment: 'neutral',
  resolved: false,
};

interface Setup {
  service: ReportService;
  llm: ScriptedLlmServer;
  store: Store;
  dir: string;
  promptsDir: string;
  /** A call with the order conversation as its transcript. */
  call: ReturnType<typeof callSummary>;
}

async function setup(
  kind: StoreKind,
  script: Script,
  { reportMd, llmTimeoutMs, ...options }: { reportMd?: string | null; llmTimeoutMs?: number } & Partial<
    Omit<ReportServiceOptions, 'store' | 'promptsDir' | 'llm'>
  > = {},
): Promise<Setup> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-reports-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const promptsDir = path.join(dir, 'prompts');
  await mkdir(promptsDir);
  if (reportMd !== null) await writeFile(path.join(promptsDir, 'report.md'), reportMd ?? (await readFile(SHIPPED_REPORT, 'utf8')));
  const llm = await startScriptedLlmServer({ script });
  cleanups.push(() => llm.close());
  const store = await freshStore(kind);
  cleanups.push(() => store.close());
  const service = new ReportService({
    store,
    promptsDir,
    llm: { apiKey: 'test-key', baseURL: llm.baseURL, model: 'test-model', ...(llmTimeoutMs === undefined ? {} : { timeoutMs: llmTimeoutMs }) },
    logger,
    ...options,
  });
  cleanups.push(() => service.close());
  const call = callSummary({ transcriptFile: await writeTranscript(dir, 'call-1', ORDER_CALL) });
  return { service, llm, store, dir, promptsDir, call };
}

async function reportOf(env: Setup, sessionId = 'call-1'): Promise<CallReport> {
  await env.service.whenIdle();
  const body = (await env.service.getCall(sessionId))?.report?.body;
  expect(body).toBeDefined();
  return CallReportSchema.parse(JSON.parse(body!));
}

describe.each(await storeKinds())('reports on %s', (kind) => {
  describe('structured fields from the model', () => {
    test('one request with the schema; the answer, validated, becomes the summary and fields', async () => {
      const env = await setup(kind, () => ({ content: `\`\`\`json\n${JSON.stringify(ANSWER)}\n\`\`\`` }));
      env.service.callEnded(env.call);
      const report = await reportOf(env);
      expect(report).toMatchObject({
        summary: ANSWER.summary,
        fields: { callback_wanted: true, customer_number: 'K 17', sentiment: 'neutral', resolved: false },
        fields_status: 'ok',
        fields_error: null,
      });
      expect((await env.service.getCall('call-1'))?.report).toMatchObject({ summary: ANSWER.summary, fieldsStatus: 'ok', fields: report.fields });

      expect(env.llm.requests).toHaveLength(1);
      const request = env.llm.requests[0]!.rawBody as Record<string, unknown>;
      expect(request).toMatchObject({ model: 'test-model', stream: false, temperature: 0 });
      expect(request.response_format).toEqual({
        type: 'json_schema',
        json_schema: {
          name: 'call_report',
          strict: true,
          schema: expect.objectContaining({
            required: ['summary', 'callback_wanted', 'customer_number', 'sentiment', 'resolved'],
            additionalProperties: false,
          }),
        },
      });
      const [system, user] = env.llm.requests[0]!.body.messages;
      expect(system?.content).toMatch(/^Summarise the call in two or three sentences for the business's staff: .*\n\nThe transcript of a /);
      expect(system?.content).toContain('- sentiment (positive|neutral|negative)');
      expect(user?.content).toBe(renderTranscript(env.call, (await readTranscriptLines(env.call.transcriptFile)).lines));
    });

    test('the report carries the call, its turns, tools and transcript', async () => {
      const env = await setup(kind, () => ({ content: JSON.stringify(ANSWER) }));
      env.service.callEnded({ ...env.call, variables: { name: 'Ada' }, tags: { campaign: 'c1' } });
      const report = await reportOf(env);
      expect(report).toMatchObject({
        version: 1,
        session_id: 'call-1',
        direction: 'inbound',
        from: '4915100000001',
        to: '4930100000002',
        started_at: '2026-11-22T03:03:55.823Z',
        ended_at: '2026-11-22T03:05:01.611Z',
        duration_ms: 65_788,
        end_reason: 'caller_hung_up',
        service_reason: 'hangup',
        turns: {
          count: 3,
          interrupted: 1,
          failed: 1,
          llm_first_token_ms: { p50: 400, max: 900 },
          first_speak_ms: { p50: 700, max: 1200 },
          // Both turns' counts summed; the cached and reasoning ones as far as a server said them.
          tokens: { prompt: 8610, cached: 3072, completion: 71, reasoning: 0 },
          // Not known, as the history and the story say: the other turn's model had no price, and a
          // partial sum would look complete. Each turn's own cost is in turns.each.
          cost_usd: null,
        },
        barge_ins: 1,
        tool_calls: [{ name: 'order_status', arguments: '{"order_number":"4711"}', outcome: 'ok', duration_ms: 130, reused: false }],
        variables: { name: 'Ada' },
        tags: { campaign: 'c1' },
      });
      expect(report.turns.each[1]!.tokens).toEqual({ prompt: 4410, cached: null, completion: 31, reasoning: null });
      expect(report.turns.each.map((turn) => [turn.model, turn.cost_usd])).toEqual([
        ['gpt-4o-mini', 0.0004],
        ['house-model', null],
        [null, null],
      ]);
      expect(report.turns.each[2]).toEqual({
        at: '2026-11-22T03:04:40.000Z',
        llm_first_token_ms: null,
        first_speak_ms: null,
        interrupted: false,
        failed: true,
        tokens: null,
        model: null,
        cost_usd: null,
        knowledge: null,
      });
      expect(report.transcript).toHaveLength(ORDER_CALL.length);
      expect(report.transcript[3]).toMatchObject({ role: 'tool', text: 'shipped', tool: { name: 'order_status', outcome: 'ok' } });
      expect(report.transcript[4]).toMatchObject({ role: 'assistant', interrupted: true, tool: null });
      // Every key is there, in the documented order.
      expect(Object.keys(report)).toEqual(Object.keys(CallReportSchema.shape));
    });

    test('an answer that does not fit is sent back once with what was wrong', async () => {
      const env = await setup(kind, (_request, { index }) =>
        index === 0 ? { content: '{"summary": "S", "callback_wanted": "yes", "sentiment": "meh"}' } : { content: JSON.stringify(ANSWER) },
      );
      env.service.callEnded(env.call);
      expect((await reportOf(env)).fields_status).toBe('ok');
      expect(env.llm.requests).toHaveLength(2);
      const retry = env.llm.requests[1]!.body.messages;
      expect(retry).toHaveLength(4);
      expect(retry[2]).toMatchObject({ role: 'assistant', content: '{"summary": "S", "callback_wanted": "yes", "sentiment": "meh"}' });
      expect(retry[3]?.role).toBe('user');
      expect(retry[3]?.content).toMatch(/^That answer does not fit: .*callback_wanted: .*sentiment: .*Answer again with only the JSON object\.$/);
    });

    test('a model that ignores the response format is still understood', async () => {
      const env = await setup(kind, () => ({ content: `Sure! Here is the report:\n${JSON.stringify(ANSWER)}\nLet me know if you need more.` }));
      env.service.callEnded(env.call);
      expect((await reportOf(env)).fields).toMatchObject({ customer_number: 'K 17' });
    });

    test('twice no fit: the fields fail, the report is still made', async () => {
      const env = await setup(kind, () => ({ content: 'I cannot do that.' }));
      env.service.callEnded(env.call);
      const report = await reportOf(env);
      expect(report).toMatchObject({ summary: null, fields: null, fields_status: 'failed' });
      expect(report.fields_error).toBe("the model's answer did not fit twice: it is not a JSON object");
      expect(report.transcript).toHaveLength(ORDER_CALL.length);
      expect(env.llm.requests).toHaveLength(2);
    });

    test('a failing model fails the fields at once, with its status', async () => {
      const env = await setup(kind, () => ({ status: 503 }));
      env.service.callEnded(env.call);
      const report = await reportOf(env);
      expect(report.fields_status).toBe('failed');
      expect(report.fields_error).toMatch(/^the model answered 503: /);
      expect(env.llm.requests).toHaveLength(1);
    });

    test('what the model writes is redacted before it is stored or sent: the summary, every field, a number field, the reason fields failed', async () => {
      const redact = redactorOf({ cards: true, ibans: true, patterns: [] });
      const reportMd = '---\nfields:\n  customer_number: string\n  card_on_file: integer\n  amount: number\n---\nSummarise.\n';
      const answer = {
        summary: 'Paid with card 4242 4242 4242 4242, refund to DE89 3704 0044 0532 0130 00.',
        customer_number: 'four two four two four two four two four two four two four two four two',
        card_on_file: 4242424242424242,
        amount: 49.9,
      };
      const env = await setup(kind, () => ({ content: JSON.stringify(answer) }), { reportMd, redact });
      env.service.callEnded(env.call);
      const report = await reportOf(env);
      expect(report).toMatchObject({
        summary: 'Paid with card [card number], refund to [IBAN].',
        fields: { customer_number: '[card number]', card_on_file: '[card number]', amount: 49.9 },
        fields_status: 'ok',
      });
      const row = JSON.stringify(await env.store.db.selectFrom('reports').selectAll().execute());
      for (const trace of ['4242', 'four two', 'DE89', '3704']) expect(row).not.toContain(trace);

      const failing = await setup(kind, () => ({ status: 503, errorMessage: 'cannot bill 4242 4242 4242 4242' }), { redact });
      failing.service.callEnded(failing.call);
      expect((await reportOf(failing)).fields_error).toMatch(/^the model answered 503: .*cannot bill \[card number\]$/);
    });

    test('a model that does not answer in time fails the fields', async () => {
      const env = await setup(kind, () => ({ hang: true }), { llmTimeoutMs: 50 });
      env.service.callEnded(env.call);
      await env.service.whenIdle();
      const report = (await env.service.getCall('call-1'))?.report;
      expect(report).toMatchObject({ fieldsStatus: 'failed', fieldsError: 'the model did not answer within 50 ms' });
      expect(await env.llm.requests[0]?.ended).toBe('aborted');
    });
  });

  describe('report.md decides what is asked', () => {
    test('without report.md: no model request, no summary, no fields', async () => {
      const env = await setup(kind, () => ({ content: JSON.stringify(ANSWER) }), { reportMd: null });
      env.service.callEnded(env.call);
      const report = await reportOf(env);
      expect(report).toMatchObject({ summary: null, fields: null, fields_status: 'skipped', fields_error: null });
      expect(report.transcript).toHaveLength(ORDER_CALL.length);
      expect(env.llm.requests).toHaveLength(0);
    });

    test('a broken report.md: no model request, the fields fail naming the line', async () => {
      const env = await setup(kind, () => ({ content: JSON.stringify(ANSWER) }), { reportMd: '---\nfields:\n  a: bool\n---\nSummarise.\n' });
      env.service.callEnded(env.call);
      const report = await reportOf(env);
      expect(report.fields_status).toBe('failed');
      expect(report.fields_error).toMatch(/^report\.md: line 3: fields\.a: a field is boolean/);
      expect(env.llm.requests).toHaveLength(0);
    });

    test('an instruction alone asks for the summary only', async () => {
      const env = await setup(kind, () => ({ content: '{"summary": "Short."}' }), { reportMd: 'Say who called.\n' });
      env.service.callEnded(env.call);
      expect(await reportOf(env)).toMatchObject({ summary: 'Short.', fields: {}, fields_status: 'ok' });
      const system = env.llm.requests[0]!.body.messages[0]?.content;
      expect(system).toMatch(/^Say who called\.\n\nThe transcript .*"summary", the summary the instructions ask for\.$/s);
    });

    test('an edit applies to the next report, without a restart', async () => {
      const env = await setup(kind, (request) => ({
        content: JSON.stringify((request.messages[0]?.content as string).includes('- urgent (boolean)') ? { summary: 'S', urgent: true } : ANSWER),
      }));
      env.service.callEnded(env.call);
      expect((await reportOf(env)).fields).toHaveProperty('sentiment');
      await writeFile(path.join(env.promptsDir, 'report.md'), '---\nfields:\n  urgent: boolean\n---\nSummarise.\n');
      env.service.callEnded({ ...env.call, callId: 'call-2', sessionId: 'call-2' });
      expect((await reportOf(env, 'call-2')).fields).toEqual({ urgent: true });
    });

    test('the demo model fills the shipped fields', async () => {
      const env = await setup(kind, demoScript);
      env.service.callEnded(env.call);
      expect(await reportOf(env)).toMatchObject({
        summary: 'The demo model read 2 caller lines and wrote no real summary.',
        fields: { callback_wanted: false, customer_number: '', sentiment: 'positive', resolved: false },
        fields_status: 'ok',
      });
    });
  });

  describe('the call is on record before its report', () => {
    test('the row is stored first, even when the model hangs; close stores the report without fields', async () => {
      const env = await setup(kind, () => ({ hang: true }), { closeGraceMs: 30 });
      // Resolves once the row is stored, the report still to come: a crash now would still leave the call on record.
      await env.service.callEnded(env.call);
      const fromStore = await new CallRepository(env.store.db).get('call-1');
      expect(fromStore).toEqual(env.call);
      expect((await env.service.getCall('call-1'))?.report).toBeUndefined();
      const request = await env.llm.nextRequest();

      await env.service.close();
      expect((await env.service.getCall('call-1'))?.report).toMatchObject({ fieldsStatus: 'failed', fieldsError: 'shutdown', summary: null });
      expect(await request.ended).toBe('aborted');
    });

    test('a call a crash left without a report is reported at the next start', async () => {
      const env = await setup(kind, () => ({ content: JSON.stringify(ANSWER) }));
      await env.service.close();
      const recent = { ...env.call, endedAt: new Date().toISOString() };
      await new CallRepository(env.store.db).save(stored(recent));
      const service = new ReportService({
        store: env.store,
        promptsDir: env.promptsDir,
        llm: { apiKey: 'test-key', baseURL: env.llm.baseURL, model: 'test-model' },
        logger,
      });
      cleanups.push(() => service.close());
      await service.whenIdle();
      expect((await service.getCall('call-1'))?.report?.fieldsStatus).toBe('ok');
    });

    test('a call whose row another writer stored is reported once, however often it is told', async () => {
      const env = await setup(kind, () => ({ content: JSON.stringify(ANSWER) }));
      await new CallRepository(env.store.db).save(stored(env.call, 9));
      env.service.callStored(env.call);
      env.service.callStored(env.call);
      await env.service.whenIdle();
      env.service.callStored(env.call);
      await env.service.whenIdle();
      expect((await env.service.getCall('call-1'))?.report?.fieldsStatus).toBe('ok');
      expect(env.llm.requests).toHaveLength(1);
    });

    test('reports behind the calls wait in the database, not in memory, and all are made', async () => {
      let inFlight = 0;
      let most = 0;
      const warnings: string[] = [];
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const env = await setup(
        kind,
        async () => {
          most = Math.max(most, ++inFlight);
          await released;
          inFlight -= 1;
          return { content: JSON.stringify(ANSWER) };
        },
        { maxQueued: 2, logger: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) }) },
      );
      const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
      await Promise.all(ids.map((sessionId) => env.service.callEnded({ ...env.call, callId: sessionId, sessionId, endedAt: new Date().toISOString() })));
      // Every call is on record, whether its report is queued or waits.
      const onRecord = await Promise.all(ids.map((id) => env.service.getCall(id)));
      expect(onRecord.map((detail) => detail?.call.sessionId)).toEqual(ids);
      expect(warnings).toEqual(['reports are behind the calls: the next ones wait in the database']);
      await env.llm.nextRequest(1);
      release();
      await env.service.whenIdle();
      const reported = await Promise.all(ids.map((id) => env.service.getCall(id)));
      expect(reported.map((detail) => detail?.report?.fieldsStatus)).toEqual(ids.map(() => 'ok'));
      // Never more than two reports at the model at once: the others waited as rows without a report.
      expect(most).toBe(2);
      expect(env.llm.requests).toHaveLength(6);
    });

    test('calls read back, latest first, with their reports', async () => {
      const env = await setup(kind, () => ({ content: JSON.stringify(ANSWER) }), { reportMd: null });
      env.service.callEnded({ ...env.call, callId: 'early', sessionId: 'early', endedAt: '2026-11-22T03:00:00.000Z' });
      env.service.callEnded({ ...env.call, callId: 'late', sessionId: 'late', endedAt: '2026-11-22T04:00:00.000Z' });
      await env.service.whenIdle();
      const list = await env.service.listCalls();
      expect(list.map((record) => [record.call.sessionId, record.report?.fieldsStatus])).toEqual([
        ['late', 'skipped'],
        ['early', 'skipped'],
      ]);
      expect((await env.service.listCalls({ limit: 1, before: '2026-11-22T04:00:00.000Z' })).map((r) => r.call.sessionId)).toEqual(['early']);
      expect((await env.service.getCall('late'))?.deliveries).toEqual([]);
      expect(await env.service.getCall('nobody')).toBeUndefined();
    });

    test('a missing transcript makes a report without lines', async () => {
      const env = await setup(kind, () => ({ content: JSON.stringify(ANSWER) }));
      env.service.callEnded({ ...env.call, transcriptFile: path.join(env.dir, 'gone.jsonl') });
      expect((await reportOf(env)).transcript).toEqual([]);
    });
  });
});
