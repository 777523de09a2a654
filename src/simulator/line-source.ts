import { createInterface, type Interface } from 'node:readline';

export type LineResult = { kind: 'line'; text: string } | { kind: 'end' } | { kind: 'aborted' };

/**
 * The caller's lines, read from a stream as they come. Lines nobody asked for
 * yet are kept, so a line typed between two calls goes to the next one, and a
 * wait given up (the call ended first) loses no line.
 */
export class LineSource {
  private readonly buffered: string[] = [];
  private ended = false;
  private waiter: ((result: LineResult) => void) | undefined;
  private readonly reader: Interface;

  constructor(input: NodeJS.ReadableStream) {
    this.reader = createInterface({ input, crlfDelay: Infinity });
    this.reader.on('line', (line) => {
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) waiter({ kind: 'line', text: line });
      else this.buffered.push(line);
    });
    this.reader.on('close', () => {
      this.ended = true;
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter?.({ kind: 'end' });
    });
  }

  /** True once the input has ended and every line has been taken. */
  get exhausted(): boolean {
    return this.ended && this.buffered.length === 0;
  }

  /** The next line; `aborted` when the signal fires first (the line then stays for a later call). */
  next(signal?: AbortSignal): Promise<LineResult> {
    const line = this.buffered.shift();
    if (line !== undefined) return Promise.resolve({ kind: 'line', text: line });
    if (this.ended) return Promise.resolve({ kind: 'end' });
    if (signal?.aborted) return Promise.resolve({ kind: 'aborted' });
    if (this.waiter) throw new Error('LineSource.next() called while another call is waiting');
    return new Promise((resolve) => {
      const onAbort = () => {
        if (this.waiter !== deliver) return;
        this.waiter = undefined;
        resolve({ kind: 'aborted' });
      };
      const deliver = (result: LineResult) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      };
      this.waiter = deliver;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Gives a line back that was taken but not used: it is the next one handed out. */
  putBack(line: string): void {
    this.buffered.unshift(line);
  }

  /** Stops reading, so that an open terminal no longer keeps the process alive. */
  close(): void {
    this.reader.close();
  }
}
