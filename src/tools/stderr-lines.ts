import type { Readable } from 'node:stream';

/**
 * A child process's stderr as lines, each kept to its first `maxBytes`: a
 * server that writes hundreds of megabytes without a line break costs this
 * much, not the process (readline would hold the whole line, and fail past
 * V8's longest string). The stream is read to its end whatever is kept, so
 * the child never blocks on a full pipe.
 */
export function readBoundedLines(stream: Readable, maxBytes: number, onLine: (line: string, cut: boolean) => void): void {
  let kept: Buffer[] = [];
  let keptBytes = 0;
  let cut = false;

  const keep = (part: Buffer): void => {
    const room = maxBytes - keptBytes;
    if (part.length > room) cut = true;
    if (room <= 0 || part.length === 0) return;
    // A copy: a view would keep the whole chunk it came in alive until the line ends.
    const piece = Buffer.from(part.subarray(0, room));
    kept.push(piece);
    keptBytes += piece.length;
  };
  const flush = (): void => {
    const line = Buffer.concat(kept, keptBytes).toString('utf8').replace(/\r$/, '');
    const wasCut = cut;
    kept = [];
    keptBytes = 0;
    cut = false;
    onLine(line, wasCut);
  };

  stream.on('data', (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (;;) {
      const newline = bytes.indexOf(0x0a, start);
      keep(bytes.subarray(start, newline < 0 ? bytes.length : newline));
      if (newline < 0) return;
      flush();
      start = newline + 1;
    }
  });
  stream.on('end', () => {
    if (keptBytes > 0 || cut) flush();
  });
  // A broken pipe is the process's end, which the transport reports; here it must only not be unhandled.
  stream.on('error', () => undefined);
}
