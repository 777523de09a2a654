/**
 * What one audit entry may hold. Some of it is whatever a stranger typed (the name of a failed
 * login): unbounded, a few hundred tries would fill the table and bury the entries that matter.
 */

/** The texts of an entry (AuditEntry in audit-log.ts). */
interface EntryTexts {
  actor: string;
  role: string;
  source?: string | undefined;
  callId?: string | undefined;
  sessionId?: string | undefined;
  detail?: Record<string, string | number | boolean> | undefined;
}

/** Characters of a name, an address, an id or a detail's value; longer ones are cut, and say so with a "…". */
export const AUDIT_TEXT_MAX = 200;
/** Details per entry (every action of Hotline's has a handful), and characters of a detail's name. */
export const AUDIT_DETAIL_KEYS_MAX = 16;
const KEY_MAX = 64;

export function bounded(text: string, max = AUDIT_TEXT_MAX): string {
  if (text.length <= max) return text;
  // Never half a surrogate pair: the cut text stays valid UTF-16 (and valid JSON for PostgreSQL).
  return `${text.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
}

/** The entry with each of its texts within AUDIT_TEXT_MAX and at most AUDIT_DETAIL_KEYS_MAX details. */
export function boundedEntry<E extends EntryTexts>(entry: E): E {
  const optional = (text: string | undefined) => (text === undefined ? undefined : bounded(text));
  let detail: EntryTexts['detail'];
  if (entry.detail) {
    const kept = Object.entries(entry.detail).slice(0, AUDIT_DETAIL_KEYS_MAX);
    detail = Object.fromEntries(kept.map(([key, value]) => [bounded(key, KEY_MAX), typeof value === 'string' ? bounded(value) : value]));
  }
  return {
    ...entry,
    actor: bounded(entry.actor),
    role: bounded(entry.role, KEY_MAX),
    source: optional(entry.source),
    callId: optional(entry.callId),
    sessionId: optional(entry.sessionId),
    detail,
  };
}
