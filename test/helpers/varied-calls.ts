/**
 * Ended calls that differ the way real ones do — in and out, short and long numbers, long names,
 * every way of ending, costs known, unknown and on the demo model, summaries of a few words and of
 * a paragraph — for what the dashboard must show without breaking a word or the page: the layout
 * tests (dashboard-layout-browser.test.ts) and the README's picture (docs-screenshot-calls.ts).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeEndedCalls } from '../../bench/dashboard-load.js';
import type { CallEndReason, CallSummary, TurnSummary } from '../../src/call/ports/call-summary.js';
import { DEMO_MODEL_ID } from '../../src/llm/scripted-contract.js';
import type { Db } from '../../src/store/schema.js';
import type { StoredReport } from '../../src/store/report-repository.js';

/** How a call's LLM cost came out: priced, a model without a price, or the built-in demo model. */
export type CostKind = 'known' | 'unknown' | 'demo';

const NUMBERS = ['4915112345678', '4930901820', '491701234567890', '447700900123', '33612345678', '15555550123', '4922198765432109', '4989123456'];
const PEOPLE = ['Anna Schmidt', 'Maximiliane Alexandra von Hohenzollern-Sigmaringen', 'Ben Okonkwo', 'Jean-Baptiste Ngata-Delacroix', 'Li Wei', 'Fatma Yılmaz-Brandenburger'];
const REASONS: readonly CallEndReason[] = ['caller_hung_up', 'transferred', 'agent_hung_up', 'operator_transferred', 'voicemail', 'caller_hung_up', 'silence', 'connection_lost', 'operator_hung_up', 'agent_hung_up'];
const SUMMARIES = [
  'Asked where order 4711 is; told it shipped yesterday with DHL and arrives tomorrow.',
  'Wanted to move the appointment on Thursday to the following week in the afternoon, after three o’clock if at all possible, because the caller works mornings; no slot was free, so the call went to a person in scheduling who could look at the whole calendar.',
  'Billing question about invoice 2026-0815.',
  'Left a message: please call back about the contract renewal.',
  'Said nothing after the greeting.',
  'Complained that the delivery was late for the second time this month and asked for compensation; a colleague in customer care took over.',
  'Changed the delivery address to Hauptstraße 112, 10827 Berlin.',
  'Asked for opening hours on public holidays.',
];
const SENTIMENTS = ['positive', 'neutral', 'negative'] as const;

/** What a turn of each cost kind records: the demo model's tokens are counted, but it has no price. */
function turnsOf(kind: CostKind, count: number, at: string): TurnSummary[] {
  return Array.from({ length: count }, (_, i) => {
    const tokens = { prompt: 1_200 + i * 180, completion: 40 + i * 7, cached: i === 0 ? 0 : 1_024 };
    const timing = { at, llmRequestMs: 0.4, llmFirstTokenMs: 310 + i * 25, firstSpeakMs: 420 + i * 30, playbackStartedMs: 480 + i * 30, playbackEndedMs: 2_900 + i * 400 };
    const base = { ...timing, interrupted: i === 1, failed: false, tokens };
    if (kind === 'known') return { ...base, model: 'gpt-4o-mini', costUsd: (tokens.prompt * 0.15 + tokens.completion * 0.6) / 1_000_000 };
    return { ...base, model: kind === 'demo' ? DEMO_MODEL_ID : 'house-model' };
  });
}

/**
 * `count` calls, the newest ending at `newest` and each one 37 minutes before the next; call ids
 * `varied-0` (the newest) onwards. `costs` picks each call's cost kind by its index.
 */
export function variedCalls(count: number, newest: Date, costs: (index: number) => CostKind): { call: CallSummary; report: StoredReport }[] {
  return Array.from({ length: count }, (_, i) => {
    const outbound = i % 3 === 1;
    const number = NUMBERS[i % NUMBERS.length]!;
    const durationMs = [7_000, 65_000, 184_000, 3_665_000, 42_000, 611_000][i % 6]!;
    const endedAt = new Date(newest.getTime() - i * 37 * 60_000);
    const startedAt = new Date(endedAt.getTime() - durationMs).toISOString();
    const turns = turnsOf(costs(i), 1 + (i % 5), startedAt);
    const person = PEOPLE[i % PEOPLE.length]!;
    const call: CallSummary = {
      callId: `varied-${i}`,
      sessionId: `varied-${i}`,
      direction: outbound ? 'outbound' : 'inbound',
      from: outbound ? '4930000000' : number,
      to: outbound ? number : '4930000000',
      startedAt,
      endedAt: endedAt.toISOString(),
      durationMs,
      endReason: REASONS[i % REASONS.length]!,
      serviceReason: undefined,
      turns,
      bargeIns: turns.filter((turn) => turn.interrupted).length,
      toolRuns: [],
      variables: outbound ? { name: person, topic: 'your order 4711' } : undefined,
      tags: outbound ? { campaign: 'spring-check-in' } : undefined,
      transcriptFile: `/nonexistent/varied-${i}.jsonl`,
    };
    const report: StoredReport = {
      callId: call.callId,
      sessionId: call.sessionId,
      createdAt: call.endedAt,
      summary: `${outbound ? `${person}: ` : ''}${SUMMARIES[i % SUMMARIES.length]!}`,
      fields: { callback_wanted: i % 4 === 0, sentiment: SENTIMENTS[i % 3]!, ...(i % 2 === 0 ? { customer_number: String(4711 + i) } : {}) },
      fieldsStatus: 'ok',
      fieldsError: null,
      body: '{}',
    };
    return { call, report };
  });
}

/** The calls written to the store, and the first one's transcript in `transcriptsDir` so that its story has a conversation. */
export async function seedVariedCalls(db: Db, transcriptsDir: string, calls: { call: CallSummary; report: StoredReport }[]): Promise<void> {
  const first = calls[0];
  if (first) {
    const file = path.join(transcriptsDir, `${first.call.callId}.jsonl`);
    const at = first.call.startedAt;
    const lines = [
      { ts: at, role: 'assistant', text: 'Hello, this is the Hotline of Example Shop. How can I help?' },
      { ts: at, role: 'user', text: 'Hi, where is my order 4711? I ordered it last Tuesday and the tracking page says nothing at all.' },
      { ts: at, role: 'tool', name: 'order_status', arguments: '{"order_number":"4711"}', outcome: 'ok', duration_ms: 240 },
      { ts: at, role: 'assistant', text: 'Your order 4711 left our warehouse yesterday with DHL and should arrive tomorrow.' },
      { ts: at, role: 'user', text: 'Great, thanks. Bye!' },
      { ts: at, role: 'assistant', text: 'Thank you for calling, goodbye!' },
    ];
    await writeFile(file, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
    first.call = { ...first.call, transcriptFile: file };
  }
  await writeEndedCalls(db, calls);
}
