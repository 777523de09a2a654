import type { Request, Response } from 'express';
import type { AuditAction, AuditEntry, AuditLog } from '../privacy/audit-log.js';
import { whoOf } from './gates.js';

/** Records what the person signed in did, from where: each dashboard action that matters. */
export type Audit = (req: Request, res: Response, entry: Omit<AuditEntry, 'actor' | 'role' | 'source'>) => Promise<void>;

/** Looking is recorded once per person and call in this long: a page that refreshes itself is one look. */
const LOOK_AGAIN_MS = 10 * 60_000;
const LOOKS: readonly AuditAction[] = ['open_story', 'open_live_call'];

export function dashboardAudit(log: AuditLog | undefined, now: () => number = Date.now): Audit {
  const looked = new Map<string, number>();
  return async (req, res, entry) => {
    if (!log) return;
    const who = whoOf(res);
    if (LOOKS.includes(entry.action) || entry.detail?.via === 'proxy') {
      const key = `${who.name}\n${entry.action}\n${entry.sessionId ?? ''}\n${entry.callId ?? ''}`;
      const at = now();
      if ((looked.get(key) ?? -Infinity) > at - LOOK_AGAIN_MS) return;
      if (looked.size > 10_000) looked.clear();
      looked.set(key, at);
    }
    await log.record({ ...entry, actor: who.name, role: who.role, source: req.ip });
  };
}
