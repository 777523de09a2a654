import type { z } from 'zod';
import { EnvelopeSchema, EventSchemas, isEventType, type VoiceEvent } from './events.js';

export type ParsedEvent =
  | { kind: 'event'; event: VoiceEvent }
  /** A well-formed event of a type this version does not know: newer services add events. */
  | { kind: 'unknown'; type: string; sessionId: string }
  | { kind: 'invalid'; reason: string; sessionId?: string };

// `__proto__` keys are dropped while parsing so that no later object spread or
// copy of an event can ever reach Object.prototype.
function dropProtoKeys(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

/** Parses one event from raw JSON text (or an already parsed body); never throws. */
export function parseEvent(input: string | unknown): ParsedEvent {
  let data: unknown = input;
  if (typeof input === 'string') {
    try {
      data = JSON.parse(input, dropProtoKeys);
    } catch {
      return { kind: 'invalid', reason: 'not valid JSON' };
    }
  }
  const envelope = EnvelopeSchema.safeParse(data);
  if (!envelope.success) {
    return { kind: 'invalid', reason: `not an event: ${describeIssues(envelope.error)}` };
  }
  const { type, session } = envelope.data;
  if (!isEventType(type)) return { kind: 'unknown', type, sessionId: session.id };
  const parsed = EventSchemas[type].safeParse(data);
  if (!parsed.success) {
    return { kind: 'invalid', reason: `${type}: ${describeIssues(parsed.error)}`, sessionId: session.id };
  }
  return { kind: 'event', event: parsed.data };
}
