/**
 * The floor (raw-reader.ts) on a thread of its own at Hotline's priority, as
 * Hotline runs in hotline-worker.ts, behind a WebSocket server the bench's
 * callers drive as they drive Hotline: a greeting on session_start, a request
 * to the LLM server on each user_speak, and its sentences written to the
 * caller's socket as raw frames. It answers the same commands as
 * hotline-worker, so the bench measures both alike (HotlineThread).
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { WebSocketServer } from 'ws';
import { tokenize } from '../src/llm/tokenize.js';
import { clockOffset, now } from './clock.js';
import { HotlineProbes, type HotlineCommand, type HotlineResults, type ProbeRecords } from './hotline-probes.js';
import type { HotlineWorkerMessage } from './hotline-worker.js';
import { takeNice } from './priority.js';
import { textFrame } from '../src/transport/ws-frame.js';
import { planReply, RawReader } from './raw-reader.js';
import { replyText, tagOf, UNTRACED_REPLY } from './replies.js';

export interface RawReaderWorkerData {
  /** Marks the thread as this worker: importing the module anywhere else starts nothing. */
  role: 'hotline-bench-floor';
  /** The LLM server's base URL, as Hotline's OPENAI_BASE_URL. */
  llmBaseUrl: string;
  /** The nice value to run at: Hotline's (see takeNice). */
  nice?: number | undefined;
}

const GREETING = 'Hello, this is the floor. How can I help?';

function speakFrame(sessionId: string, text: string): Buffer {
  return textFrame(JSON.stringify({ type: 'speak', session_id: sessionId, text }));
}

async function main(port: NonNullable<typeof parentPort>, data: RawReaderWorkerData): Promise<void> {
  const nice = takeNice(data.nice);
  const probes = new HotlineProbes();
  let records: ProbeRecords | undefined;
  const base = data.llmBaseUrl.endsWith('/') ? data.llmBaseUrl : `${data.llmBaseUrl}/`;
  // The stream Hotline gets: it asks for the token counts too, so every chunk carries `"usage":null`.
  const reader = new RawReader(
    new URL('chat/completions', base),
    { 'content-type': 'application/json', authorization: 'Bearer bench', accept: 'text/event-stream' },
    (text, at) => records?.speaks.push({ text, at, readAt: probes.clientDataAt }),
    now,
  );

  const onUserSpeak = (socket: Socket, sessionId: string, said: string): void => {
    const tag = tagOf(said);
    const reply = tag === undefined ? UNTRACED_REPLY : replyText(tag);
    // Everything a turn needs is made before its request goes out, so no token waits for it.
    const plan = planReply(tokenize(reply));
    const frames = plan.texts.map((text) => speakFrame(sessionId, text));
    const body = JSON.stringify({
      model: 'bench-model',
      messages: [{ role: 'user', content: said }],
      stream: true,
      stream_options: { include_usage: true },
    });
    reader.ask(body, plan, frames, socket).catch(() => {
      // A caller gone mid-reply: its turn simply ends, as a call's would.
    });
  };

  const server = http.createServer((_request, response) => response.writeHead(404).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws, request) => {
    // Frames go to the socket itself, encoded in advance; ws only does the handshake and reads the caller's events.
    const socket = request.socket;
    let sessionId = '';
    ws.on('message', (message: Buffer) => {
      const event = JSON.parse(message.toString('utf8')) as { type?: unknown; session?: { id?: unknown }; text?: unknown };
      if (event.type === 'session_start' && typeof event.session?.id === 'string') {
        sessionId = event.session.id;
        socket.write(speakFrame(sessionId, GREETING));
      } else if (event.type === 'user_speak' && typeof event.text === 'string') {
        onUserSpeak(socket, sessionId, event.text);
      }
    });
    ws.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const listening = typeof address === 'object' && address ? address.port : 0;

  const run = async (command: HotlineCommand): Promise<HotlineResults[HotlineCommand['kind']]> => {
    switch (command.kind) {
      case 'probe-start':
        records = { speaks: [], bargeIns: [] };
        return null;
      case 'probe-stop': {
        const result = records ?? { speaks: [], bargeIns: [] };
        records = undefined;
        return result;
      }
      case 'close':
        reader.close();
        for (const client of wss.clients) client.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        await new Promise<void>((resolve) => server.close(() => resolve()));
        return null;
      default:
        return probes.run(command);
    }
  };
  port.on('message', ({ id, command }: { id: number; command: HotlineCommand }) => {
    run(command).then(
      (result) => port.postMessage({ kind: 'answer', id, result } satisfies HotlineWorkerMessage),
      (error: unknown) =>
        port.postMessage({ kind: 'failed', id, message: error instanceof Error ? error.message : String(error) } satisfies HotlineWorkerMessage),
    );
  });
  port.postMessage({
    kind: 'ready',
    url: `http://127.0.0.1:${listening}`,
    wsUrl: `ws://127.0.0.1:${listening}`,
    port: listening,
    clockOffset: clockOffset(),
    nice,
  } satisfies HotlineWorkerMessage);
}

const data = workerData as Partial<RawReaderWorkerData> | undefined;
if (parentPort && data?.role === 'hotline-bench-floor') {
  main(parentPort, data as RawReaderWorkerData).catch((error: unknown) => {
    // Rethrown outside the promise so the worker fails with an 'error' event the bench reports.
    setImmediate(() => {
      throw error;
    });
  });
}
