import type { z } from 'zod';
import { EnvelopeSchema, EventSchemas, isEventType, type EventType, type VoiceEvent } from './events.js';

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

/** Deeper than any real event; deeper ones are refused before anything walks them recursively. */
export const MAX_EVENT_DEPTH = 32;

/** Nesting depth of a parsed JSON value, measured without recursion and giving up past `limit`. */
function depthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The `type` reported for an event that names none: it is logged and ignored like any unknown type. */
export const NO_TYPE = '(none)';

/**
 * The forms the production service and its tools wrap or name an event in,
 * brought to the plain one. Only objects without a `type` are looked at again,
 * so the usual event costs one property read:
 * - n8n hands on `{"body": {…event…}}`: the body is the event (when it names a
 *   type, or nothing at the top level names a session);
 * - some senders name the type `eventType`.
 */
function normalise(data: unknown): unknown {
  if (!isObject(data) || data.type !== undefined) return data;
  let event = data;
  const { body } = event;
  if (event.eventType === undefined && isObject(body) && (body.type !== undefined || body.eventType !== undefined || event.session === undefined)) {
    event = body;
    if (event.type !== undefined) return event;
  }
  return typeof event.eventType === 'string' ? { ...event, type: event.eventType } : event;
}

function knownType(data: unknown): EventType | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const type: unknown = (data as { type?: unknown }).type;
  return typeof type === 'string' && isEventType(type) ? type : undefined;
}

/** Parses one event from raw JSON text (or an already parsed body); never throws. */
export function parseEvent(input: string | unknown): ParsedEvent {
  let data: unknown = input;
  if (typeof input === 'string') {
    try {
      // A reviver makes JSON.parse several times slower, and every frame of a call passes here: only
      // text that could spell the key (directly or through a \u escape) needs it.
      data = input.includes('__proto__') || input.includes('\\u') ? JSON.parse(input, dropProtoKeys) : JSON.parse(input);
    } catch {
      return { kind: 'invalid', reason: 'not valid JSON' };
    }
  }
  if (depthExceeds(data, MAX_EVENT_DEPTH)) {
    return { kind: 'invalid', reason: `nested deeper than ${MAX_EVENT_DEPTH} levels` };
  }
  data = normalise(data);
  // The usual case in one pass: a known event that is valid also satisfies the envelope.
  const known = knownType(data);
  if (known) {
    const parsed = EventSchemas[known].safeParse(data);
    if (parsed.success) return { kind: 'event', event: parsed.data };
  }
  const envelope = EnvelopeSchema.safeParse(data);
  if (!envelope.success) {
    // No type at all, but a session: something the service (or a tool in between) sends that
    // this version cannot name. Ignored like an unknown type, not refused.
    if (isObject(data) && data.type === undefined) {
      const session = EnvelopeSchema.shape.session.safeParse(data.session);
      if (session.success) return { kind: 'unknown', type: NO_TYPE, sessionId: session.data.id };
    }
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
