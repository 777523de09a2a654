/**
 * A person's access and erasure requests, and the audit log, over Hotline's API (ADMIN_TOKEN):
 *
 *   POST /api/people/export {number}                      every call, report, delivery and transcript of theirs, as one JSON document
 *   POST /api/people/erase {number, stopCalling?, dryRun?} erases all of it (dryRun: only counts what would go)
 *   GET  /api/audit?actor=&action=&sessionId=&from=&to=&limit=
 *
 * The number goes in a body, never in a URL: URLs end up in access logs.
 */
import express, { type Router } from 'express';
import { z } from 'zod';
import type { Logger } from '../logger.js';
import { InvalidPhoneNumberError } from '../phone/errors.js';
import type { AuditLog } from '../privacy/audit-log.js';
import { countPersonData, erasePersonData, exportPersonData, PersonDataUnreadableError, type PersonDataDeps } from '../privacy/person-data.js';
import { describeIssues } from '../protocol/parse-event.js';
import { requireAdminToken, type SecretGate } from './auth.js';
import { HttpError } from './http-error.js';

export interface PrivacyApiOptions {
  token: string | undefined;
  gate: SecretGate;
  person: PersonDataDeps;
  audit: AuditLog;
  logger: Logger;
}

const NumberSchema = z.union([z.string(), z.number()]).transform(String).pipe(z.string().trim().min(1).max(40));
const ExportBodySchema = z.strictObject({ number: NumberSchema });
const EraseBodySchema = z.strictObject({ number: NumberSchema, stopCalling: z.boolean().optional(), dryRun: z.boolean().optional() });
const AuditQuerySchema = z.object({
  actor: z.string().max(200).optional(),
  action: z.string().max(50).optional(),
  sessionId: z.string().max(200).optional(),
  from: z.string().max(40).optional(),
  to: z.string().max(40).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

/** The API acts as the admin whose token it holds. */
const API_ACTOR = { actor: 'api', role: 'admin' } as const;

export function privacyApiRouter(options: PrivacyApiOptions): Router {
  const router = express.Router();
  const json = express.json({ limit: '4kb' });
  const auth = requireAdminToken(options.token, options.gate);
  const { logger, audit } = options;

  router.post('/api/people/export', auth, json, async (req, res) => {
    const body = parse(ExportBodySchema, req.body);
    const document = await withNumber(() => exportPersonData(options.person, body.number));
    await audit.record({ ...API_ACTOR, action: 'export_person', source: req.ip, detail: { calls: document.calls.length } });
    logger.info({ calls: document.calls.length }, 'a person’s data exported over the admin API');
    res.status(200).json(document);
  });

  router.post('/api/people/erase', auth, json, async (req, res) => {
    const body = parse(EraseBodySchema, req.body);
    if (body.dryRun) {
      const counts = await withNumber(() => countPersonData(options.person, body.number));
      res.status(200).json({ dryRun: true, counts });
      return;
    }
    const result = await withNumber(() => erasePersonData(options.person, body.number, { actor: API_ACTOR.actor, stopCalling: body.stopCalling ?? false }));
    await audit.record({ ...API_ACTOR, action: 'erase_person', source: req.ip, detail: { erasure: result.id, calls: result.counts.calls, leftInProgress: result.leftInProgress } });
    logger.info({ erasure: result.id, counts: result.counts, leftInProgress: result.leftInProgress }, 'a person’s data erased over the admin API');
    res.status(200).json(result);
  });

  router.get('/api/audit', auth, async (req, res) => {
    const filter = parse(AuditQuerySchema, req.query);
    res.status(200).json({ entries: await audit.list(filter) });
  });

  return router;
}

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw new HttpError(400, `invalid request: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

async function withNumber<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof InvalidPhoneNumberError) throw new HttpError(400, error.message);
    // Not all of the person's data could be read: no answer, rather than one that leaves some out.
    if (error instanceof PersonDataUnreadableError) throw new HttpError(500, error.message, { cause: error });
    throw error;
  }
}
