/**
 * The scripted LLM server on a thread of its own (`--llm-thread`), as a real
 * LLM would be on another host: its work no longer competes with Hotline's
 * for the event loop. Reports what the bench needs over the worker port,
 * with times on this thread's clock and the offset to hrtime to align them:
 *   → { kind: 'ready', baseURL, clockOffset }
 *   → { kind: 'request', tag, at }  { kind: 'first', tag, at }  { kind: 'closed', tag, at }
 *   → { kind: 'ended', tag, outcome, texts, ats }
 *   ← { kind: 'fast', on }  { kind: 'reset' }
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startScriptedLlmServer, type RecordedRequest } from '../src/llm/scripted-server.js';
import { clockOffset, now } from './clock.js';
import { takeNice, yieldCpuToHotline } from './priority.js';
import { replyText, requestedTag, UNTRACED_REPLY } from './replies.js';

export interface LlmWorkerData {
  /** Marks the thread as this worker: importing the module anywhere else starts nothing. */
  role: 'hotline-bench-llm';
  ttftMs: number;
  tokenDelayMs: number;
  /** Drop this thread to the lowest CPU priority (see priority.ts). */
  yieldCpu: boolean;
  /** Instead, run at this nice value (see FixtureOptions.llmNice). */
  nice?: number | undefined;
}

export type LlmWorkerMessage =
  | { kind: 'ready'; baseURL: string; clockOffset: number; nice: number | undefined }
  | { kind: 'request'; tag: string; at: number }
  | { kind: 'first'; tag: string; at: number }
  | { kind: 'closed'; tag: string; at: number }
  | { kind: 'ended'; tag: string; outcome: string; texts: string[]; ats: Float64Array };

export type LlmWorkerCommand = { kind: 'fast'; on: boolean } | { kind: 'reset' };


async function main(port: NonNullable<typeof parentPort>, data: LlmWorkerData): Promise<void> {
  const nice = data.nice !== undefined ? takeNice(data.nice) : data.yieldCpu ? yieldCpuToHotline() : undefined;
  const post = (message: LlmWorkerMessage): void => port.postMessage(message);
  let fast = false;
  const tags = new WeakMap<RecordedRequest, string>();
  const llm = await startScriptedLlmServer({
    host: '127.0.0.1',
    ttftMs: data.ttftMs,
    tokenDelayMs: data.tokenDelayMs,
    script: (body, { index, signal }) => {
      const tag = requestedTag(body);
      if (tag === undefined) return { content: UNTRACED_REPLY };
      // The server publishes the record and calls the script in the same tick, so it is the newest one.
      const record = llm.requests.at(-1);
      const requestedAt = record?.index === index ? record.receivedAt : now();
      if (record?.index === index) {
        tags.set(record, tag);
        void record.ended.then((outcome) => {
          const ats = Float64Array.from(record.tokens, (t) => t.at);
          post({ kind: 'ended', tag, outcome, texts: record.tokens.map((t) => t.text), ats });
        });
      }
      signal.addEventListener('abort', () => post({ kind: 'closed', tag, at: now() }), { once: true });
      post({ kind: 'request', tag, at: requestedAt });
      const content = replyText(tag);
      return fast ? { content, ttftMs: 1, tokenDelayMs: 1 } : { content };
    },
    onToken: (request, _token, at) => {
      if (request.tokens.length !== 1) return;
      const tag = tags.get(request);
      if (tag !== undefined) post({ kind: 'first', tag, at });
    },
  });
  port.on('message', (command: LlmWorkerCommand) => {
    if (command.kind === 'fast') fast = command.on;
    else llm.requests.length = 0;
  });
  post({ kind: 'ready', baseURL: llm.baseURL, clockOffset: clockOffset(), nice });
}

const data = workerData as Partial<LlmWorkerData> | undefined;
if (parentPort && data?.role === 'hotline-bench-llm') {
  main(parentPort, data as LlmWorkerData).catch((error: unknown) => {
    // Rethrown outside the promise so the worker fails with an 'error' event the bench reports.
    setImmediate(() => {
      throw error;
    });
  });
}
