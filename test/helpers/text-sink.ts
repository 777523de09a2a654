import { Writable } from 'node:stream';

/** A writable that keeps what is written to it, for a CLI's stdout or a logger's destination. */
export function textSink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}
