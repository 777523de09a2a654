/** Calls, transcripts and webhook attempts for the tests of the store and the reports. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CallProgress, CallSummary } from '../../src/call/ports/call-summary.js';
import type { DeliveryAttempt } from '../../src/reports/delivery.js';

/** A finished inbound call with three turns (two with the LLM's token counts) and a tool run; `overrides` change what a test is about. */
export function callSummary(overrides: Partial<CallSummary> = {}): CallSummary {
  // One call per session id unless a test says otherwise: its call id is its session id.
  return {
    callId: overrides.sessionId ?? 'call-1',
    sessionId: 'call-1',
    direction: 'inbound',
    from: '4915100000001',
    to: '4930100000002',
    startedAt: '2026-11-22T03:03:55.823Z',
    endedAt: '2026-11-22T03:05:01.611Z',
    durationMs: 65_788,
    endReason: 'caller_hung_up',
    serviceReason: 'hangup',
    turns: [
      // The first server counted its cached tokens; the second (Mistral's way) did not say.
      { at: '2026-11-22T03:03:58.000Z', llmFirstTokenMs: 400, firstSpeakMs: 700, interrupted: false, failed: false, tokens: { prompt: 4200, completion: 40, cached: 3072, reasoning: 0 }, model: 'gpt-4o-mini', costUsd: 0.0004 },
      { at: '2026-11-22T03:04:20.000Z', llmFirstTokenMs: 900, firstSpeakMs: 1200, interrupted: true, failed: false, tokens: { prompt: 4410, completion: 31 }, model: 'house-model' },
      { at: '2026-11-22T03:04:40.000Z', interrupted: false, failed: true },
    ],
    bargeIns: 1,
    toolRuns: [{ name: 'order_status', arguments: '{"order_number":"4711"}', outcome: 'ok', durationMs: 130, reused: false }],
    variables: undefined,
    tags: undefined,
    transcriptFile: '/nonexistent/call-1.jsonl',
    ...overrides,
  };
}

/** `call` as a row to save: a CallSummary is a call's last snapshot; `revision` orders it among the others. */
export function stored(call: CallSummary, revision = 1): CallProgress {
  return { ...call, revision };
}

/** A snapshot of the call while it goes on: no end yet, `revision` as given. */
export function callProgress(revision: number, overrides: Partial<CallSummary> = {}): CallProgress {
  const { endedAt: _endedAt, durationMs: _durationMs, endReason: _endReason, ...going } = callSummary(overrides);
  return { ...going, revision };
}

export type Line = { role: 'user' | 'assistant' | 'tool' | 'event'; text: string; [field: string]: unknown };

/** A conversation about an order, as the call core writes it. */
export const ORDER_CALL: readonly Line[] = [
  { role: 'event', text: 'session_start', direction: 'inbound', from: '4915100000001', to: '4930100000002' },
  { role: 'assistant', text: 'Hello, thanks for calling! How can I help you today?' },
  { role: 'user', text: 'Where is my order 4711?' },
  { role: 'tool', text: 'shipped', name: 'order_status', arguments: '{"order_number":"4711"}', outcome: 'ok', duration_ms: 130 },
  { role: 'assistant', text: 'Your order 4711 has shipped and', interrupted: true },
  { role: 'user', text: 'Can someone call me back? My customer number is K 17.' },
  { role: 'assistant', text: 'Of course, a colleague will call you back.' },
  { role: 'event', text: 'session_end', reason: 'hangup', origin: 'service' },
];

/** Writes `lines` as the call's JSONL transcript; returns the file. */
export async function writeTranscript(dir: string, sessionId: string, lines: readonly Line[]): Promise<string> {
  const file = path.join(dir, `${sessionId}.jsonl`);
  const start = Date.parse('2026-11-22T03:03:55.823Z');
  const text = lines.map((line, i) => JSON.stringify({ ts: new Date(start + i * 1000).toISOString(), session_id: sessionId, ...line }));
  await writeFile(file, `${text.join('\n')}\n`);
  return file;
}

/** Records webhook attempts and lets a test await the one it expects, instead of sleeping. */
export function attemptLog(): {
  readonly attempts: DeliveryAttempt[];
  readonly onAttempt: (attempt: DeliveryAttempt) => void;
  until(predicate: (attempt: DeliveryAttempt) => boolean): Promise<DeliveryAttempt>;
} {
  const attempts: DeliveryAttempt[] = [];
  const waiting: { predicate: (attempt: DeliveryAttempt) => boolean; resolve: (attempt: DeliveryAttempt) => void }[] = [];
  return {
    attempts,
    onAttempt(attempt) {
      attempts.push(attempt);
      for (const waiter of [...waiting]) {
        if (!waiter.predicate(attempt)) continue;
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve(attempt);
      }
    },
    until(predicate) {
      const seen = attempts.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.push({ predicate, resolve }));
    },
  };
}
