/**
 * What the report model wrote, through the same redaction as the caller's words: the model reads a
 * transcript whose numbers are out, yet may still write one (pieced together from what it was told,
 * or made up), and its summary and fields go to the store, the dashboard and the signed webhook.
 */
import type { Redact } from '../call/ports/redaction.js';
import type { FieldValues } from '../store/report-repository.js';
import type { ReportContent } from './report-builder.js';

/**
 * The summary, every field and the reason fields failed (it may quote the model's refusal), redacted.
 * A number field is read as its digits: one that holds a card becomes the placeholder's text, since a
 * number cannot be written half taken out.
 */
export function redactContent(content: ReportContent, redact: Redact): ReportContent {
  switch (content.status) {
    case 'ok':
      return { status: 'ok', summary: redact(content.summary), fields: redactFields(content.fields, redact) };
    case 'failed':
      return { status: 'failed', error: redact(content.error) };
    case 'skipped':
      return content;
  }
}

function redactFields(fields: FieldValues, redact: Redact): FieldValues {
  const out: FieldValues = {};
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') out[name] = redact(value);
    else if (typeof value === 'number') {
      const digits = numberText(value);
      const redacted = redact(digits);
      out[name] = redacted === digits ? value : redacted;
    } else out[name] = value;
  }
  return out;
}

/** A number as its digits, never in exponent form (JSON may bring a 16-digit card as 4.242424242424242e15). */
function numberText(value: number): string {
  return Number.isInteger(value) && Math.abs(value) < 1e21 ? BigInt(value).toString() : String(value);
}
