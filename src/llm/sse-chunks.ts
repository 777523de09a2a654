import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { abortError } from '../net/http-fetch.js';

/** The LLM reported an error inside an already open stream, or the stream broke off. */
export class LlmStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlmStreamError';
  }
}

/**
 * Chat Completions chunks from a server-sent-events body (a Node stream or a
 * web stream). Hotline reads the raw response itself: the SDK's generic stream
 * layers cost several times more per token than all of Hotline's own work on it.
 * With an aborted `signal`, a body that breaks off fails with the abort.
 */
export function sseChunks(body: AsyncIterable<Uint8Array>, signal?: AbortSignal): AsyncIterable<ChatCompletionChunk> {
  return body instanceof Readable ? new ReadableSse(body, signal) : fromIterable(body, signal);
}

/**
 * Reads every chunk of `stream` into `onChunk` until it returns false (the
 * rest is not wanted: the stream is closed, as a `break` out of a `for await`
 * would). Resolves at the stream's end; rejects as iterating it would. A
 * stream of sseChunks' own over a Node body hands each chunk over inside the
 * body's 'data' event, as soon as it is parsed: no promise, tick or result
 * object per token between the socket and the caller's speak.
 */
export async function readChunks(stream: AsyncIterable<ChatCompletionChunk>, onChunk: (chunk: ChatCompletionChunk) => boolean): Promise<void> {
  if (stream instanceof ReadableSse) return stream.feed(onChunk);
  for await (const chunk of stream) if (!onChunk(chunk)) break;
}

/** No real chunk comes near this; a server that never ends a line must not grow Hotline's memory without bound. */
const MAX_EVENT_CHARS = 1024 * 1024;

/** Splits a body into SSE events and parses their data; keeps an incomplete line for the next piece. */
class SseParser {
  // Keeps multi-byte characters split across pieces whole, and decodes Buffers faster than TextDecoder's stream mode.
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';
  private data: string | undefined;
  /** [DONE] has come: nothing after it is parsed. */
  done = false;

  /** Appends the chunks this piece completes to `out`; throws on an error event or bad JSON. */
  write(bytes: Uint8Array, out: ChatCompletionChunk[]): void {
    if (this.done) return;
    const text = this.rest + this.decoder.write(bytes);
    let start = 0;
    let newline = text.indexOf('\n');
    while (newline >= 0) {
      const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      if (end === start) {
        // A blank line ends an event.
        if (this.data !== undefined) {
          const payload = this.data;
          this.data = undefined;
          if (payload === '[DONE]') {
            this.done = true;
            this.rest = '';
            return;
          }
          const chunk: unknown = JSON.parse(payload);
          // Only objects are chunks; the turn reads every field of one defensively.
          if (chunk !== null && typeof chunk === 'object') {
            const { error } = chunk as { error?: unknown };
            if (error !== undefined && error !== null) throw new LlmStreamError(streamErrorMessage(error));
            out.push(chunk as ChatCompletionChunk);
          }
        }
      } else if (text.startsWith('data:', start)) {
        const value = text.slice(start + (text.charCodeAt(start + 5) === 32 ? 6 : 5), end);
        this.data = this.data === undefined ? value : `${this.data}\n${value}`;
        if (this.data.length > MAX_EVENT_CHARS) throw new LlmStreamError('the LLM sent an event larger than 1 MiB');
      }
      // Comments (":"), "event:", "id:" and "retry:" lines carry nothing Hotline needs.
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    this.rest = start === 0 ? text : text.slice(start);
    if (this.rest.length > MAX_EVENT_CHARS) throw new LlmStreamError('the LLM sent a line longer than 1 MiB');
  }
}

function streamErrorMessage(error: unknown): string {
  if (typeof error === 'string' && error !== '') return error;
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message !== '' ? message : 'the LLM reported an error in the stream';
}

async function* fromIterable(body: AsyncIterable<Uint8Array>, signal: AbortSignal | undefined): AsyncGenerator<ChatCompletionChunk> {
  const parser = new SseParser();
  const out: ChatCompletionChunk[] = [];
  try {
    for await (const bytes of body) {
      // Like the SDK, read on to the end after [DONE]: leaving the body early would destroy a keep-alive socket.
      let failure: { error: unknown } | undefined;
      try {
        parser.write(bytes, out);
      } catch (error) {
        // The chunks before the bad event are the reader's first.
        failure = { error };
      }
      for (const chunk of out) yield chunk;
      out.length = 0;
      if (failure) throw failure.error;
    }
  } catch (error) {
    // A body closed by an abort fails as a premature close: the reader must see the abort.
    if (signal?.aborted) throw abortError(signal);
    throw error;
  }
  // Should a closed body ever end quietly instead, the abort must not pass for the reply's end.
  if (signal?.aborted) throw abortError(signal);
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
const brokenOff = (): LlmStreamError => new LlmStreamError('the LLM stream closed before it ended');
/** Parsed chunks the reader has not taken yet before the body is paused. */
const HIGH_WATER = 64;

/**
 * A Node stream read through its 'data' events, parsed as it arrives: each
 * chunk costs the reader one promise, where a Readable's async iterator and a
 * generator on top of it cost several promises, ticks and objects per token.
 */
class ReadableSse implements AsyncIterableIterator<ChatCompletionChunk> {
  private readonly parser = new SseParser();
  private readonly queue: ChatCompletionChunk[] = [];
  private head = 0;
  /** The body has ended, or its failure has been handed to the reader. */
  private finished = false;
  private failure: { error: unknown } | undefined;
  private waiter: { resolve(result: IteratorResult<ChatCompletionChunk>): void; reject(error: unknown): void } | undefined;
  /** Set by feed(): chunks go to it as they are parsed, and the end or the failure settles `fed`. */
  private reader: ((chunk: ChatCompletionChunk) => boolean) | undefined;
  private fed: { resolve(): void; reject(error: unknown): void } | undefined;

  constructor(
    private readonly body: Readable,
    private readonly signal: AbortSignal | undefined,
  ) {
    // A body that ended or broke before anyone read it has already said so; its listeners would wait forever.
    if (body.readableEnded) this.finished = true;
    else if (body.destroyed) this.fail(body.errored ?? brokenOff());
    if (this.finished || this.failure) return;
    body.on('data', (bytes: Buffer) => this.onData(bytes));
    body.once('end', () => {
      this.finished = true;
      this.deliver();
    });
    body.once('error', (error: Error) => this.fail(error));
    // Destroyed without an error (a barge-in closes it so): the reply broke off. A body that ended closes
    // too, every turn: the error, and the stack it captures, is made only when it is needed.
    body.once('close', () => {
      if (!this.finished && !this.failure) this.fail(brokenOff());
    });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ChatCompletionChunk>> {
    if (this.head < this.queue.length) return Promise.resolve({ value: this.take(), done: false });
    if (this.failure) return Promise.reject(this.takeFailure());
    if (this.finished) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Hands every chunk to `reader`, the ones queued already first; see readChunks. */
  feed(reader: (chunk: ChatCompletionChunk) => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.reader = reader;
      this.fed = { resolve, reject };
      this.deliver();
    });
  }

  /** The reader stopped early: the rest of the reply is not wanted. */
  return(): Promise<IteratorResult<ChatCompletionChunk>> {
    this.finished = true;
    this.queue.length = 0;
    this.head = 0;
    if (!this.body.readableEnded) this.body.destroy();
    return Promise.resolve(DONE);
  }

  private onData(bytes: Buffer): void {
    // Like the SDK, read on to the end after [DONE]: leaving the body early would destroy a keep-alive socket.
    if (this.finished || this.failure || this.parser.done) return;
    try {
      this.parser.write(bytes, this.queue);
    } catch (error) {
      this.fail(error);
      this.body.destroy();
      return;
    }
    this.deliver();
    if (this.queue.length - this.head >= HIGH_WATER) this.body.pause();
  }

  private fail(error: unknown): void {
    if (this.finished || this.failure) return;
    this.failure = { error: this.signal?.aborted ? abortError(this.signal) : error };
    this.deliver();
  }

  /** Hands the reader waiting for it the next chunk, the failure or the end. */
  private deliver(): void {
    if (this.reader) return this.deliverAll(this.reader);
    const waiter = this.waiter;
    if (!waiter) return;
    if (this.head < this.queue.length) {
      this.waiter = undefined;
      waiter.resolve({ value: this.take(), done: false });
    } else if (this.failure) {
      this.waiter = undefined;
      waiter.reject(this.takeFailure());
    } else if (this.finished) {
      this.waiter = undefined;
      waiter.resolve(DONE);
    }
  }

  /** feed()'s deliver: every queued chunk, then the failure or the end. */
  private deliverAll(reader: (chunk: ChatCompletionChunk) => boolean): void {
    while (this.head < this.queue.length) {
      let more: boolean;
      try {
        more = reader(this.take());
      } catch (error) {
        // A reader that throws fails the read, as it would fail a for-await loop, not the socket's event.
        void this.return();
        return this.settleFeed({ error });
      }
      if (!more) {
        void this.return();
        return this.settleFeed();
      }
    }
    if (this.failure) this.settleFeed({ error: this.takeFailure() });
    else if (this.finished) this.settleFeed();
  }

  /** Resolves feed() at the end, or rejects it with the failure, once. */
  private settleFeed(failure?: { error: unknown }): void {
    const fed = this.fed;
    this.reader = undefined;
    this.fed = undefined;
    if (failure) fed?.reject(failure.error);
    else fed?.resolve();
  }

  private take(): ChatCompletionChunk {
    const chunk = this.queue[this.head++] as ChatCompletionChunk;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      if (this.body.isPaused() && !this.finished) this.body.resume();
    }
    return chunk;
  }

  /** Queued chunks come first; then the failure, once, and the end after it. */
  private takeFailure(): unknown {
    const { error } = this.failure as { error: unknown };
    this.failure = undefined;
    this.finished = true;
    return error;
  }
}
