/**
 * Who did what: every staff action on the dashboard or the API, appended to the store and never
 * changed. An entry names the call (by id) it concerned, never a person's number or words; people's
 * erasures are on record in `erasures` with their counts only.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { AuditLogTable, Db } from '../store/schema.js';
import { boundedEntry } from './audit-bounds.js';

export const AUDIT_ACTIONS = [
  'log_in',
  'log_in_failed',
  'log_out',
  'reveal_numbers',
  'open_story',
  'open_live_call',
  'transfer',
  'hang_up',
  'export_person',
  'erase_person',
  'campaign_create',
  'campaign_change',
  'prompts_change',
  'staff_add',
  'staff_reset',
  'staff_remove',
  'staff_role',
  'place_call',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  actor: string;
  role: string;
  action: AuditAction;
  source?: string | undefined;
  callId?: string | undefined;
  sessionId?: string | undefined;
  detail?: Record<string, string | number | boolean> | undefined;
}

/** A row as read back: the table's columns, its detail parsed. */
export type AuditRow = Omit<AuditLogTable, 'detail'> & { detail: Record<string, unknown> | null };

export interface AuditFilter {
  actor?: string | undefined;
  action?: string | undefined;
  sessionId?: string | undefined;
  /** ISO times, inclusive. */
  from?: string | undefined;
  to?: string | undefined;
  limit?: number | undefined;
}

export class AuditLog {
  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Appends an entry, each of its texts cut to what an entry may hold (audit-bounds.ts). An action is not refused because its record could not be written (the store
   * may be briefly away): the failure is logged, with what was done, so the log keeps the trace.
   */
  async record(given: AuditEntry): Promise<void> {
    const entry = boundedEntry(given);
    const row = {
      id: randomUUID(),
      at: this.now().toISOString(),
      actor: entry.actor,
      role: entry.role,
      action: entry.action,
      source: entry.source ?? null,
      call_id: entry.callId ?? null,
      session_id: entry.sessionId ?? null,
      detail: entry.detail ? JSON.stringify(entry.detail) : null,
    };
    try {
      await this.db.insertInto('audit_log').values(row).execute();
    } catch (error) {
      this.log.error({ err: error, audit: { ...row, detail: entry.detail } }, 'audit entry could not be stored');
    }
  }

  async list(filter: AuditFilter = {}): Promise<AuditRow[]> {
    let query = this.db.selectFrom('audit_log').selectAll();
    if (filter.actor) query = query.where('actor', '=', filter.actor);
    if (filter.action) query = query.where('action', '=', filter.action);
    if (filter.sessionId) query = query.where('session_id', '=', filter.sessionId);
    if (filter.from) query = query.where('at', '>=', filter.from);
    if (filter.to) query = query.where('at', '<=', filter.to);
    const rows = await query
      .orderBy('at', 'desc')
      .orderBy('id')
      .limit(Math.min(Math.max(filter.limit ?? 200, 1), 1000))
      .execute();
    return rows.map((row) => ({ ...row, detail: row.detail ? (JSON.parse(row.detail) as Record<string, unknown>) : null }));
  }

  /** The entries about these sessions' calls: part of a person's data export. */
  async ofSessions(sessionIds: readonly string[]): Promise<AuditRow[]> {
    if (sessionIds.length === 0) return [];
    const rows = await this.db.selectFrom('audit_log').selectAll().where('session_id', 'in', [...sessionIds]).orderBy('at').execute();
    return rows.map((row) => ({ ...row, detail: row.detail ? (JSON.parse(row.detail) as Record<string, unknown>) : null }));
  }
}
