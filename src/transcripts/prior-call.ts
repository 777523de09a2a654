import { open } from 'node:fs/promises';
import { z } from 'zod';
import type { PriorCall } from '../call/ports/prior-call.js';

/** Only the end of a long transcript matters to the conversation, and a huge file must not cost the call its answer. */
const MAX_READ_BYTES = 256 * 1024;

const Line = z.looseObject({
  role: z.string(),
  text: z.string().catch(''),
  direction: z.string().optional().catch(undefined),
  from: z.string().optional().catch(undefined),
  to: z.string().optional().catch(undefined),
  variables: z.record(z.string(), z.string()).optional().catch(undefined),
  call_id: z.string().optional().catch(undefined),
  origin: z.string().optional().catch(undefined),
  end_reason: z.string().optional().catch(undefined),
  open: z.boolean().optional().catch(undefined),
});

/** A session_end line of a call that is over. Older lines, without end_reason, say so only when the service ended the call. */
function endedForGood(line: z.output<typeof Line>): boolean {
  if (line.open === true) return false;
  return line.origin === 'service' || line.end_reason !== undefined;
}

/** Reads a call's transcript; undefined when there is none. Broken lines (a crash mid-write) are skipped. */
export async function readPriorCall(file: string): Promise<PriorCall | undefined> {
  let text: string;
  try {
    text = await readTail(file, MAX_READ_BYTES);
  } catch {
    return undefined;
  }
  const prior: PriorCall = { session: undefined, variables: undefined, lines: [], ended: false, callId: undefined };
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let parsed;
    try {
      parsed = Line.safeParse(JSON.parse(raw));
    } catch {
      continue;
    }
    if (!parsed.success) continue;
    const line = parsed.data;
    prior.ended = line.role === 'event' && line.text === 'session_end' && endedForGood(line);
    if (line.role === 'event' && line.call_id !== undefined) prior.callId = line.call_id;
    if (line.role === 'event' && line.text === 'session_start') {
      prior.session = { direction: line.direction, from: line.from, to: line.to };
      prior.variables = line.variables;
    } else if ((line.role === 'user' || line.role === 'assistant') && line.text.trim() !== '') {
      prior.lines.push({ role: line.role, text: line.text });
    }
  }
  return prior;
}

async function readTail(file: string, maxBytes: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    const text = buffer.toString('utf8');
    // A cut first line is a broken line: drop it.
    return start > 0 ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    await handle.close();
  }
}
