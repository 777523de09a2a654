/**
 * A call's transcript as the report model reads it: plain lines, the way a
 * person would write the call down, capped so a long call still fits the
 * model's context. The start (who called, why) and the end (what was done)
 * matter most; the middle is what gives way.
 */
import type { CallSummary } from '../call/ports/call-summary.js';
import type { TranscriptLine } from './transcript-lines.js';

/** About 6,000 tokens: room for the instruction and the answer in any model's context. */
export const MAX_TRANSCRIPT_CHARS = 24_000;

/**
 * `[inbound call, 65 s, ended: transferred]` and the call's lines. The numbers
 * stay out: the model needs no one's phone number to sum up a call.
 */
export function renderTranscript(call: CallSummary, lines: readonly TranscriptLine[], maxChars = MAX_TRANSCRIPT_CHARS): string {
  const out = [`[${call.direction} call, ${Math.round(call.durationMs / 1000)} s, ended: ${call.endReason}]`];
  for (const line of lines) out.push(...renderLine(line));
  return cap(out.join('\n'), maxChars);
}

function renderLine(line: TranscriptLine): string[] {
  const text = line.text.trim();
  switch (line.role) {
    case 'user':
      return text === '' ? [] : [`Caller: ${text}`];
    case 'assistant': {
      const said = text === '' ? [] : [`Agent: ${text}`];
      return line.interrupted ? [...said, '[the caller interrupted]'] : said;
    }
    case 'tool':
      if (!line.tool) return [];
      return [line.tool.outcome === null ? `[tool ${line.tool.name}]` : `[tool ${line.tool.name} → ${line.tool.outcome}]`];
    case 'event':
      // Session bookkeeping; what the model needs of the call's end is in the summary's own line.
      return [];
  }
}

/** Keeps the first third and the last two thirds of the budget, cut at line ends where there are any. */
function cap(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const headBudget = Math.floor(maxChars / 3);
  const tailBudget = maxChars - headBudget;
  let head = text.slice(0, headBudget);
  const headEnd = head.lastIndexOf('\n');
  if (headEnd > 0) head = head.slice(0, headEnd);
  let tail = text.slice(text.length - tailBudget);
  const tailStart = tail.indexOf('\n');
  if (tailStart >= 0 && tailStart < tail.length - 1) tail = tail.slice(tailStart + 1);
  const middle = text.slice(head.length, text.length - tail.length);
  const omitted = middle.split('\n').filter((line) => line.trim() !== '').length;
  return `${head}\n[… ${omitted} line${omitted === 1 ? '' : 's'} of the call left out …]\n${tail}`;
}
