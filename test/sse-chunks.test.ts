import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { readDelta } from '../src/llm/delta.js';
import { LlmStreamError, readChunks, sseChunks } from '../src/llm/sse-chunks.js';
import { readUsage } from '../src/llm/usage.js';

type Body = AsyncIterable<Uint8Array>;

/** Both kinds of body the reader takes: a web stream (the generic path) and a Node stream (the one Hotline reads). */
const kinds: { name: string; body(pieces: Uint8Array[]): Body }[] = [
  {
    name: 'web stream',
    body: (pieces) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const piece of pieces) controller.enqueue(piece);
          controller.close();
        },
      }),
  },
  { name: 'Node stream', body: (pieces) => Readable.from(pieces.map((piece) => Buffer.from(piece)), { objectMode: false }) },
];

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

async function collect(chunks: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

describe.each(kinds)('sseChunks over a $name', ({ body }) => {
  test('events split anywhere, CRLF line ends, comments and other fields; stops at [DONE]', async () => {
    const pieces = [': keep-alive\r\n\r\nevent: message\r\nid: 1\r\nda', 'ta: {"id":"a","choi', 'ces":[]}\r\n\r\n', 'data:{"id":"b","choices":[]}\n\n', 'data: [DONE]\n\ndata: {"id":"after"}\n\n'];
    expect(await collect(sseChunks(body(pieces.map(encode))))).toEqual([
      { id: 'a', choices: [] },
      { id: 'b', choices: [] },
    ]);
  });

  test('multi-line data is joined with newlines; a multi-byte character split across pieces survives', async () => {
    const bytes = encode('data: {"id":"é",\ndata: "choices":[]}\n\n');
    const cut = bytes.indexOf(0xc3) + 1;
    expect(await collect(sseChunks(body([bytes.slice(0, cut), bytes.slice(cut)])))).toEqual([{ id: 'é', choices: [] }]);
  });

  test('an error event inside the stream throws a typed error after the chunks before it', async () => {
    const out: unknown[] = [];
    const failure = (async () => {
      for await (const chunk of sseChunks(body([encode('data: {"id":"a"}\n\ndata: {"error":{"message":"overloaded"}}\n\n')]))) out.push(chunk);
    })();
    await expect(failure).rejects.toThrow(LlmStreamError);
    expect(out).toEqual([{ id: 'a' }]);
  });

  test('bad JSON in an event is an error, not a silent end', async () => {
    await expect(collect(sseChunks(body([encode('data: {"id":\n\n')])))).rejects.toThrow(SyntaxError);
  });
});

describe('sseChunks over a Node stream as it arrives', () => {
  const event = (id: number): string => `data: {"id":"${id}"}\n\n`;

  test('a slow reader pauses the body and resumes it once it has caught up; nothing is lost or reordered', async () => {
    const source = new PassThrough();
    const chunks = sseChunks(source)[Symbol.asyncIterator]();
    source.write(Array.from({ length: 100 }, (_, i) => event(i)).join(''));
    expect(source.isPaused()).toBe(true);
    const first = await chunks.next();
    expect(first.value).toEqual({ id: '0' });
    const ids: string[] = [];
    for (let i = 1; i < 100; i++) ids.push((await chunks.next()).value.id as string);
    expect(ids).toEqual(Array.from({ length: 99 }, (_, i) => String(i + 1)));
    expect(source.isPaused()).toBe(false);
    source.end(event(100));
    expect((await chunks.next()).value).toEqual({ id: '100' });
    expect(await chunks.next()).toEqual({ done: true, value: undefined });
  });

  test('a reader that stops early destroys the body', async () => {
    const source = new PassThrough();
    source.write(event(1) + event(2));
    for await (const chunk of sseChunks(source)) {
      expect(chunk).toEqual({ id: '1' });
      break;
    }
    expect(source.destroyed).toBe(true);
  });

  test('a body destroyed without an error fails with the abort when the signal is aborted, else as a broken stream', async () => {
    const aborted = new AbortController();
    const cut = new PassThrough();
    const reading = collect(sseChunks(cut, aborted.signal));
    cut.write(event(1));
    aborted.abort('superseded');
    cut.destroy();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });

    const broken = new PassThrough();
    const failing = collect(sseChunks(broken));
    broken.destroy();
    await expect(failing).rejects.toThrow(LlmStreamError);
  });

  test('a body that ended or broke before the reader came still reports it', async () => {
    const ended = new PassThrough();
    ended.end();
    ended.resume();
    await new Promise((resolve) => ended.once('end', resolve));
    expect(await collect(sseChunks(ended))).toEqual([]);

    const broken = new PassThrough();
    broken.on('error', () => undefined);
    broken.destroy(new Error('reset'));
    await new Promise((resolve) => broken.once('close', resolve));
    await expect(collect(sseChunks(broken))).rejects.toThrow('reset');
  });
});

describe('readChunks: the turn reads a Node body as it arrives', () => {
  const content = (text: string, extra = ''): string =>
    `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":null}],"usage":null${extra}}\n\n`;

  test('each chunk is handed over within the write that completes it, before the write returns', async () => {
    const source = new PassThrough();
    const seen: string[] = [];
    const reading = readChunks(sseChunks(source), (chunk) => {
      seen.push(readDelta(chunk)?.text ?? '');
      return true;
    });
    source.write(content('Hel'));
    expect(seen).toEqual(['Hel']);
    source.write(content('lo "x" é\n') + content('!'));
    expect(seen).toEqual(['Hel', 'lo "x" é\n', '!']);
    source.end('data: [DONE]\n\n');
    await reading;
    expect(seen).toHaveLength(3);
  });

  test('chunks queued before the reader came go first; a reader returning false stops and destroys the body', async () => {
    const source = new PassThrough();
    const chunks = sseChunks(source);
    source.write(content('a') + content('b'));
    const seen: string[] = [];
    const reading = readChunks(chunks, (chunk) => {
      seen.push(readDelta(chunk)?.text ?? '');
      return seen.length < 3;
    });
    source.write(content('c') + content('d'));
    await reading;
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(source.destroyed).toBe(true);
  });

  test('a reader that throws fails the read, not the socket; an error event fails it after the chunks before it', async () => {
    const throwing = new PassThrough();
    const failure = readChunks(sseChunks(throwing), () => {
      throw new Error('reader bug');
    });
    throwing.write(content('a'));
    await expect(failure).rejects.toThrow('reader bug');
    expect(throwing.destroyed).toBe(true);

    const erring = new PassThrough();
    const seen: string[] = [];
    const failing = readChunks(sseChunks(erring), (chunk) => {
      seen.push(readDelta(chunk)?.text ?? '');
      return true;
    });
    erring.write(content('a') + 'data: {"error":{"message":"overloaded"}}\n\n');
    await expect(failing).rejects.toThrow(LlmStreamError);
    expect(seen).toEqual(['a']);
  });

  test('every recorded stream reads the same through readChunks as through the iterator, failures included', async () => {
    const dir = path.join(import.meta.dirname, 'fixtures', 'llm-streams');
    const files = [
      ...readdirSync(dir).filter((f) => f.endsWith('.sse')).map((f) => path.join(dir, f)),
      ...readdirSync(path.join(dir, 'derived')).filter((f) => f.endsWith('.sse')).map((f) => path.join(dir, 'derived', f)),
    ];
    expect(files.length).toBeGreaterThan(40);
    for (const file of files) {
      const events = readFileSync(file, 'utf8').split(/(?<=\n\n)/u);
      const read = async (whole: boolean): Promise<unknown[]> => {
        const source = new PassThrough();
        const out: unknown[] = [];
        const note = (chunk: unknown): boolean => {
          out.push([readDelta(chunk, true), readDelta(chunk, false), readUsage(chunk)]);
          return true;
        };
        const reading = whole
          ? (async () => {
              for await (const chunk of sseChunks(source)) note(chunk);
            })()
          : readChunks(sseChunks(source), note);
        const settled = reading.then(
          () => 'ended',
          (error: unknown) => `failed: ${String(error)}`,
        );
        for (const event of events) source.write(event);
        source.end();
        out.push(await settled);
        return out;
      };
      expect(await read(false), path.basename(file)).toEqual(await read(true));
    }
  });
});
