import { open } from 'node:fs/promises';
import { z } from 'zod';

/** A transcript line as the story shows it; unknown fields are kept out, odd lines skipped. */
const Line = z.object({
  ts: z.string().optional(),
  role: z.enum(['user', 'assistant', 'tool', 'event']),
  text: z.string().default(''),
  interrupted: z.boolean().optional(),
  generated: z.string().optional(),
  keypad: z.boolean().optional(),
  mailbox: z.boolean().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  outcome: z.string().optional(),
  duration_ms: z.number().optional(),
  reason: z.string().optional(),
  reused: z.boolean().optional(),
  hold_lines: z.array(z.string()).optional(),
  side_effect: z.boolean().optional(),
});
export type TranscriptLine = z.infer<typeof Line>;

/** More than any call says; a larger file is shown up to here. */
const MAX_BYTES = 4 * 1024 * 1024;

/** The call's JSONL transcript, read without blocking; missing or unreadable gives what could be read. */
export async function readTranscript(file: string): Promise<{ lines: TranscriptLine[]; problem?: string }> {
  let text: string;
  try {
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(Math.min((await handle.stat()).size, MAX_BYTES));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      text = buffer.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { lines: [], problem: code === 'ENOENT' ? 'The transcript file is gone.' : `The transcript could not be read (${code ?? 'error'}).` };
  }
  const lines: TranscriptLine[] = [];
  let skipped = 0;
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    try {
      const parsed = Line.safeParse(JSON.parse(raw));
      if (parsed.success) lines.push(parsed.data);
      else skipped += 1;
    } catch {
      skipped += 1;
    }
  }
  return skipped > 0 ? { lines, problem: `${skipped} line(s) of the transcript could not be read.` } : { lines };
}
