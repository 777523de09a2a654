/**
 * A call's JSONL transcript read back for its report: every line, in order,
 * checked line by line. A line that is broken (a crash mid-write) or not a
 * transcript line is skipped, never the whole report.
 */
import { open } from 'node:fs/promises';
import { z } from 'zod';

export interface TranscriptLine {
  /** ISO time the line was written. */
  readonly ts: string;
  readonly role: 'user' | 'assistant' | 'tool' | 'event';
  readonly text: string;
  /** An assistant line the caller cut short. */
  readonly interrupted: boolean;
  /** A tool line's tool and how its run ended (no outcome for the call's own tools: transfer, hangup). */
  readonly tool: { readonly name: string; readonly outcome: string | null } | null;
}

/** A report reads the whole call, but a runaway file must not cost the process its memory. */
const MAX_READ_BYTES = 4 * 1024 * 1024;

const Line = z.looseObject({
  ts: z.string().catch(''),
  role: z.enum(['user', 'assistant', 'tool', 'event']),
  text: z.string().catch(''),
  interrupted: z.boolean().optional().catch(undefined),
  name: z.string().optional().catch(undefined),
  outcome: z.string().optional().catch(undefined),
});

export interface TranscriptRead {
  readonly lines: readonly TranscriptLine[];
  /** The file was longer than a report reads: the lines end before the call did. */
  readonly truncated: boolean;
}

/** The transcript's lines; none when the file does not exist (a call that never said a word). */
export async function readTranscriptLines(file: string): Promise<TranscriptRead> {
  let text: string;
  let truncated: boolean;
  try {
    ({ text, truncated } = await readHead(file, MAX_READ_BYTES));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], truncated: false };
    throw error;
  }
  const lines: TranscriptLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      continue;
    }
    const parsed = Line.safeParse(json);
    if (!parsed.success) continue;
    const line = parsed.data;
    lines.push({
      ts: line.ts,
      role: line.role,
      text: line.text,
      interrupted: line.interrupted === true,
      tool: line.role === 'tool' && line.name !== undefined ? { name: line.name, outcome: line.outcome ?? null } : null,
    });
  }
  return { lines, truncated };
}

async function readHead(file: string, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, 0);
    const text = buffer.toString('utf8');
    // A cut last line is a broken line: drop it.
    return size > maxBytes ? { text: text.slice(0, text.lastIndexOf('\n') + 1), truncated: true } : { text, truncated: false };
  } finally {
    await handle.close();
  }
}
