/**
 * The network phase's baseline: what the model and the business system cost a client that does
 * nothing but ask them, over the same link, on connections it keeps warm. One sample of a plain
 * turn is a chat request to its first sentence's last token; one of a tool turn is the model's
 * tool call read to its end, the business system's answer, and the model's answer to its first
 * sentence, one after the other, as a turn needs them. Hotline's figure above this is its own
 * overhead, new connections included.
 */
import { Agent, request } from 'node:https';
import { completingTokenIndices } from './baselines.js';
import { now } from './clock.js';
import { callerWords, TOOL_NAME, type TurnKind } from './network-script.js';

export interface Endpoint {
  host: string;
  port: number;
}

interface Streamed {
  /** Content tokens and when each arrived. */
  tokens: { text: string; at: number }[];
  toolCall: { id: string; name: string; arguments: string } | undefined;
  /** The request went out on a connection that had carried one before. */
  reused: boolean;
}

export interface WarmSample {
  kind: TurnKind;
  /** The sample's tag, which the far side's records of its requests carry. */
  tag: string;
  /** Request sent → the token completing the answer's first sentence arrived (ms). */
  firstSentenceMs: number;
  /** Request sent → the answer's first token arrived (ms); of the answering request in a tool turn. */
  firstTokenMs: number;
  /** Every request of the sample found its connection open: a sample that did not is not warm, and not used. */
  warm: boolean;
}

/** The one tool offered, as Hotline describes it to the model. */
const TOOLS = [
  {
    type: 'function',
    function: {
      name: TOOL_NAME,
      description: 'Looks up an order by its order number.',
      parameters: { type: 'object', properties: { order_number: { type: 'string' } }, required: ['order_number'], additionalProperties: false },
    },
  },
];

/** The far side did not answer the warm client as the script says: the baseline cannot be measured. */
export class WarmClientError extends Error {
  override readonly name = 'WarmClientError';
}

export class WarmClient {
  /** One connection to each server, kept open between samples. */
  private readonly agent: Agent;

  constructor(
    private readonly model: Endpoint,
    private readonly business: Endpoint,
    ca: string,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
  }

  /** Opens both connections, so that every sample after finds them open. */
  async warm(): Promise<void> {
    await this.get(this.model, '/v1/models');
    await this.get(this.business, '/orders/warm-up');
  }

  /** One round trip to the business system on its warm connection (ms), and whether it was warm. */
  async roundTrip(): Promise<{ ms: number; warm: boolean }> {
    const sentAt = now();
    const { reused } = await this.get(this.business, '/orders/round-trip');
    return { ms: now() - sentAt, warm: reused };
  }

  async sample(kind: TurnKind, tag: string): Promise<WarmSample> {
    const words = callerWords(kind, tag);
    const user = { role: 'user', content: words };
    const sentAt = now();
    if (kind === 'plain') {
      const answer = await this.chat({ model: 'bench', stream: true, messages: [user], tools: TOOLS });
      return this.figures(kind, tag, sentAt, answer, answer.reused);
    }
    const call = await this.chat({ model: 'bench', stream: true, messages: [user], tools: TOOLS });
    if (!call.toolCall) throw new WarmClientError(`the scripted model did not call ${TOOL_NAME} for the warm client's tool turn`);
    const looked = await this.get(this.business, `/orders/${encodeURIComponent(tag)}`);
    const answerSentAt = now();
    const answer = await this.chat({
      model: 'bench',
      stream: true,
      tools: TOOLS,
      messages: [
        user,
        { role: 'assistant', content: null, tool_calls: [{ id: call.toolCall.id, type: 'function', function: { name: call.toolCall.name, arguments: call.toolCall.arguments } }] },
        { role: 'tool', tool_call_id: call.toolCall.id, content: looked.body },
      ],
    });
    const figures = this.figures(kind, tag, sentAt, answer, call.reused && looked.reused && answer.reused);
    return { ...figures, firstTokenMs: (answer.tokens[0]?.at ?? Number.NaN) - answerSentAt };
  }

  close(): void {
    this.agent.destroy();
  }

  private figures(kind: TurnKind, tag: string, sentAt: number, answer: Streamed, warm: boolean): WarmSample {
    const completing = completingTokenIndices(answer.tokens.map((token) => token.text))[0];
    return {
      kind,
      tag,
      firstSentenceMs: (answer.tokens[completing ?? -1]?.at ?? Number.NaN) - sentAt,
      firstTokenMs: (answer.tokens[0]?.at ?? Number.NaN) - sentAt,
      warm,
    };
  }

  private get(to: Endpoint, path: string): Promise<{ body: string; reused: boolean }> {
    return new Promise((resolve, reject) => {
      const sent = request({ host: to.host, port: to.port, path, method: 'GET', agent: this.agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (piece: string) => (body += piece));
        res.on('end', () => resolve({ body, reused: sent.reusedSocket }));
        res.on('error', reject);
      });
      sent.on('error', reject);
      sent.end();
    });
  }

  /** A streaming chat completion, read to its end, each content token stamped as it arrived. */
  private chat(body: unknown): Promise<Streamed> {
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const sent = request(
        {
          host: this.model.host,
          port: this.model.port,
          path: '/v1/chat/completions',
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), authorization: 'Bearer bench' },
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new WarmClientError(`the scripted model answered the warm client with ${res.statusCode}`));
            return;
          }
          const tokens: Streamed['tokens'] = [];
          let toolCall: Streamed['toolCall'];
          let pending = '';
          res.setEncoding('utf8').on('data', (piece: string) => {
            const at = now();
            pending += piece;
            const events = pending.split('\n\n');
            pending = events.pop() ?? '';
            for (const event of events) {
              const data = event.startsWith('data: ') ? event.slice('data: '.length) : '';
              if (data === '' || data === '[DONE]') continue;
              const delta = (JSON.parse(data) as { choices?: { delta?: ChunkDelta }[] }).choices?.[0]?.delta;
              if (typeof delta?.content === 'string' && delta.content !== '') tokens.push({ text: delta.content, at });
              const call = delta?.tool_calls?.[0];
              if (call) {
                toolCall ??= { id: call.id ?? '', name: call.function?.name ?? '', arguments: '' };
                toolCall.arguments += call.function?.arguments ?? '';
              }
            }
          });
          res.on('end', () => resolve({ tokens, toolCall, reused: sent.reusedSocket }));
          res.on('error', reject);
        },
      );
      sent.on('error', reject);
      sent.end(payload);
    });
  }
}

interface ChunkDelta {
  content?: string | null;
  tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
}
