/**
 * The floor of first-speak overhead: the least any program could do with the
 * stream Hotline reads. It asks the same LLM server over a plain node:http
 * keep-alive connection, counts the stream's content tokens with one byte
 * scan per piece of body, and at the token that completes a sentence writes a
 * WebSocket frame encoded before the stream began. No JSON is parsed, no
 * sentence is judged, nothing is allocated per token but what Node's HTTP
 * client allocates for the piece itself: what is left is the loopback hop,
 * the wake-up of the thread, libuv, the HTTP parser and the socket write,
 * which any program pays.
 *
 * It knows where the sentences end because it knows the reply: the bench's
 * replies are made from templates (replies.ts), and it runs them through
 * Hotline's own chunker before the request goes out, so its frames go out on
 * exactly the tokens Hotline's do and the two are measured alike.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { SentenceChunker } from '../src/call/speech/chunker.js';
import { toSpeech } from '../src/call/speech/speech-text.js';

/** What precedes every content token's text in a chunk: `"content":"` and anything but the closing quote. */
const CONTENT = Buffer.from('"content":"');
const QUOTE = 0x22;

/** The sentences of a reply as Hotline speaks them, and the content token that lets each go. */
export interface ReplyPlan {
  /** Per sentence: the 0-based content token that completes it, or -1 for those the stream's end lets go. */
  readonly completing: readonly number[];
  readonly texts: readonly string[];
}

/** Runs the reply's tokens through Hotline's chunker and speech filter, as the bench's analysis does. */
export function planReply(tokens: readonly string[]): ReplyPlan {
  const chunker = new SentenceChunker();
  const completing: number[] = [];
  const texts: string[] = [];
  const add = (chunks: string[], token: number): void => {
    for (const chunk of chunks) {
      const text = toSpeech(chunk);
      if (text === '') continue;
      completing.push(token);
      texts.push(text);
    }
  };
  tokens.forEach((token, i) => add(chunker.push(token), i));
  add(chunker.flush(), -1);
  return { completing, texts };
}

/** Told when a frame has left: its send returned. */
export type FrameLeft = (text: string, at: number) => void;

/**
 * One connection's worth of raw reading: `ask` posts a request to the LLM
 * server and writes each sentence's frame to `out` the moment the stream
 * reaches it. The agent keeps the connection alive between turns, as
 * Hotline's does.
 */
export class RawReader {
  private readonly agent = new http.Agent({ keepAlive: true, scheduling: 'fifo' });

  constructor(
    private readonly url: URL,
    private readonly headers: Readonly<Record<string, string>>,
    private readonly left: FrameLeft,
    private readonly now: () => number,
  ) {}

  /** Posts `body`; `frames[i]` is sentence i of `plan` encoded for `out`. Resolves when the stream has ended. */
  ask(body: string, plan: ReplyPlan, frames: readonly Buffer[], out: Socket): Promise<void> {
    return new Promise((resolve, reject) => {
      const request = http.request(this.url, { method: 'POST', agent: this.agent, headers: this.headers }, (response) => {
        let token = 0;
        let next = 0;
        const { completing, texts } = plan;
        response.on('data', (bytes: Buffer) => {
          let at = bytes.indexOf(CONTENT);
          while (at >= 0) {
            at += CONTENT.length;
            if (bytes[at] !== QUOTE) {
              while (completing[next] === token) {
                out.write(frames[next] as Buffer);
                this.left(texts[next] as string, this.now());
                next++;
              }
              token++;
            }
            at = bytes.indexOf(CONTENT, at);
          }
        });
        response.once('end', () => {
          // The last sentence has no token after it to let it go: the stream's end does, as in Hotline.
          for (; next < completing.length; next++) {
            out.write(frames[next] as Buffer);
            this.left(texts[next] as string, this.now());
          }
          resolve();
        });
        response.once('error', reject);
      });
      request.once('error', reject);
      request.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
