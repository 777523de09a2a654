/**
 * Steady webhook calls as the voice service plays them, for the rolling-restart tests: each caller
 * posts its events one after another to one URL (a balancer), plays every speak it is answered
 * with, and notes any answer that is not 200 or 204.
 */
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../src/llm/scripted-server.js';
import { lastUserText, userTexts } from './scripts.js';

export interface Answer {
  status: number;
  body: unknown;
}

export async function postEvent(url: string, event: unknown): Promise<Answer> {
  const res = await fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as unknown) : text || undefined };
}

/** The model answers each question naming how many the caller has asked so far: a call that lost its past answers wrongly. */
export async function countingModel(): Promise<ScriptedLlmServer> {
  return startScriptedLlmServer({
    script: (request) => ({ content: `Answer ${userTexts(request).length} to ${lastUserText(request)}.` }),
    host: '127.0.0.1',
    ttftMs: 1,
    tokenDelayMs: 0,
    record: false,
  });
}

/** What `countingModel` answers the n-th question (from 1) of a call. */
export function countedAnswer(n: number, question: string): string {
  return `Answer ${n} to ${question}.`;
}

/** A webhook call as the service plays it, one event after another; what the caller heard, in order. */
export class WebhookCaller {
  readonly heard: string[] = [];
  readonly problems: string[] = [];

  constructor(
    private readonly url: string,
    readonly id: string,
  ) {}

  private get session() {
    return { id: this.id };
  }

  private async send(event: Record<string, unknown>): Promise<Answer> {
    const answer = await postEvent(this.url, { ...event, session: this.session }).catch((error: unknown): Answer => ({ status: 0, body: String(error) }));
    if (answer.status !== 200 && answer.status !== 204) this.problems.push(`${String(event.type)}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer;
  }

  /** Plays every speak an answer carries, and the ones the answers to its playback events bring. */
  private async play(answer: Answer): Promise<void> {
    let pending: Answer | undefined = answer;
    while (pending?.status === 200) {
      const action = pending.body as { type?: string; text?: string };
      if (action.type !== 'speak' || typeof action.text !== 'string') {
        this.problems.push(`unexpected action ${JSON.stringify(action)}`);
        return;
      }
      this.heard.push(action.text);
      await this.send({ type: 'assistant_speak', text: action.text, duration_ms: 200, speech_started_at: 0 });
      pending = await this.send({ type: 'assistant_speech_ended' });
    }
  }

  async start(): Promise<void> {
    await this.play(
      await this.send({ type: 'session_start', session: { ...this.session, direction: 'inbound', from_phone_number: '4915112345678', to_phone_number: '4930123456' } }),
    );
  }

  async ask(question: string): Promise<void> {
    await this.play(await this.send({ type: 'user_speak', text: question, barged_in: false }));
  }

  async hangUp(): Promise<void> {
    await this.send({ type: 'session_end', reason: 'hangup' });
  }
}

/** Reads until `done` holds, every 100 ms, for at most `timeoutMs`; the failure names what it waited for and what it last read. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}: ${JSON.stringify(value).slice(0, 400)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
