import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { CallActivity } from '../call/ports/call-activity.js';
import type { CallControl, ControlOutcome } from '../call/ports/call-control.js';
import type { Logger } from '../logger.js';
import { CallNotPlacedError } from '../outbound/errors.js';
import type { OutboundCalls } from '../outbound/outbound-calls.js';
import { normalizePhoneNumber } from '../phone/phone-number.js';
import { HotlineError } from '../errors.js';
import { maskedOrNone, maskNumber } from '../phone/mask-number.js';
import { describeIssues } from '../protocol/parse-event.js';
import { requireAdminToken, type SecretGate } from './auth.js';
import { HttpError } from './http-error.js';

export interface AdminApiOptions {
  token: string | undefined;
  /** The failure budget a wrong token spends, shared with every other edge. */
  gate: SecretGate;
  /** Places outbound calls: refuses while shutting down, without the AIFLOW_* settings, and for a number stopped or in a call. */
  outbound: OutboundCalls;
  /** The calls in progress, for a person to hand over or end. */
  control: CallControl;
  /** The calls in progress on every replica, each with the replica holding it: what GET /api/calls lists. */
  liveCalls(): readonly LiveCall[];
  /** Sends reports whose delivery was given up again (all, or one call's); undefined without a report webhook. */
  redeliver(sessionId?: string): Promise<number | undefined>;
  defaults: { countryCode: string | undefined };
  logger: Logger;
}

export type LiveCall = CallActivity & { readonly replica: string };

const variableValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);

const StartCallBodySchema = z.strictObject({
  toPhoneNumber: z.union([z.string(), z.number()]).transform(String),
  variables: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'variable names are letters, digits, _ . -'), variableValue).optional(),
  aiFlowId: z.string().trim().min(1).optional(),
  billingDevice: z.string().trim().min(1).optional(),
});

const RedeliverBodySchema = z.strictObject({
  /** One call's report; without it, every delivery given up. */
  sessionId: z.string().trim().min(1).max(200).optional(),
});

const TransferBodySchema = z.strictObject({
  /** One of the named transfer targets; without it, TRANSFER_TARGET. */
  target: z.string().trim().min(1).max(100).optional(),
});

/** A body is JSON, or there is none (a hangup needs nothing). */
function requireJson(req: Request, _res: Response, next: NextFunction): void {
  if (req.headers['content-length'] === '0' || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)) return next();
  if (!req.is('application/json')) throw new HttpError(415, 'Content-Type must be application/json');
  next();
}

/**
 * Hotline's own API: POST /api/calls places an outbound call with a greeting
 * made for the person called; GET /api/calls lists the calls in progress;
 * POST /api/calls/:sessionId/transfer and
 * /hangup let a person hand over or end a call in progress; POST
 * /api/reports/redeliver sends reports whose delivery was given up again.
 */
export function adminApiRouter(options: AdminApiOptions): Router {
  const router = express.Router();
  const { logger } = options;
  const json = express.json({ limit: '16kb' });

  // The session ids an operator's tool acts on: the calls in progress, oldest first, numbers masked as the dashboard shows them.
  router.get('/api/calls', requireAdminToken(options.token, options.gate), (_req, res) => {
    const calls = [...options.liveCalls()].sort((a, b) => a.startedAt.localeCompare(b.startedAt)).map(listed);
    res.set('Cache-Control', 'no-store').json({ calls });
  });

  router.post('/api/calls/:sessionId/transfer', requireAdminToken(options.token, options.gate), requireJson, json, async (req, res) => {
    const parsed = TransferBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) throw new HttpError(400, `invalid body: ${describeIssues(parsed.error)}`);
    const sessionId = String(req.params.sessionId);
    const { target } = parsed.data;
    const outcome = await options.control.transfer(sessionId, target);
    logger.info({ sessionId, target, outcome }, 'operator transfer requested over the admin API');
    if (outcome === 'no_destination') throw new HttpError(409, noDestination(target, options.control.transferTargets()));
    answerControl(res, outcome, 'transferring');
  });

  router.post('/api/calls/:sessionId/hangup', requireAdminToken(options.token, options.gate), async (req, res) => {
    const sessionId = String(req.params.sessionId);
    const outcome = await options.control.hangUp(sessionId);
    logger.info({ sessionId, outcome }, 'operator hangup requested over the admin API');
    answerControl(res, outcome, 'ending');
  });

  router.post('/api/reports/redeliver', requireAdminToken(options.token, options.gate), requireJson, json, async (req, res) => {
    const parsed = RedeliverBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) throw new HttpError(400, `invalid body: ${describeIssues(parsed.error)}`);
    const requeued = await options.redeliver(parsed.data.sessionId);
    if (requeued === undefined) throw new HttpError(409, 'reports are not delivered anywhere: set REPORT_WEBHOOK_URL');
    logger.info({ requeued }, 'given-up report deliveries queued again over the admin API');
    res.status(202).json({ requeued });
  });

  router.post(
    '/api/calls',
    requireAdminToken(options.token, options.gate),
    function requireJsonBody(req, _res, next) {
      if (!req.is('application/json')) throw new HttpError(415, 'Content-Type must be application/json');
      next();
    },
    json,
    async function startOutboundCall(req, res) {
      const parsed = StartCallBodySchema.safeParse(req.body);
      if (!parsed.success) throw new HttpError(400, `invalid body: ${describeIssues(parsed.error)}`);
      const body = parsed.data;
      let toPhoneNumber: string;
      try {
        toPhoneNumber = normalizePhoneNumber(body.toPhoneNumber, { defaultCountryCode: options.defaults.countryCode });
      } catch (error) {
        throw new HttpError(400, error instanceof Error ? error.message : 'invalid phone number');
      }
      const { aiFlowId, billingDevice } = body;
      try {
        await options.outbound.place({ to: toPhoneNumber, variables: body.variables ?? {}, aiFlowId, billingDevice });
      } catch (error) {
        if (error instanceof CallNotPlacedError) {
          logger.info({ toPhoneNumber: maskNumber(toPhoneNumber), reason: error.code }, 'outbound call not placed');
          throw new HttpError(error.status, error.message);
        }
        logger.warn({ err: error, aiFlowId, toPhoneNumber: maskNumber(toPhoneNumber) }, 'outbound call refused');
        throw new HttpError(statusOf(error), error instanceof Error ? error.message : 'outbound call failed', { cause: error });
      }
      logger.info({ aiFlowId, toPhoneNumber: maskNumber(toPhoneNumber), variables: Object.keys(body.variables ?? {}) }, 'outbound call initiated');
      res.status(201).json({ toPhoneNumber, status: 'initiated' });
    },
  );
  return router;
}

/** What a request to a call in progress answers: 202 while it happens, else why not. */
function answerControl(res: Response, outcome: ControlOutcome, status: 'transferring' | 'ending'): void {
  switch (outcome) {
    case 'done':
      res.status(202).json({ status });
      return;
    case 'not_found':
      throw new HttpError(404, 'no call in progress with this session id');
    case 'ending':
      throw new HttpError(409, 'the call is already ending or being handed over');
    case 'no_destination':
      throw new HttpError(409, 'no such transfer target: set TRANSFER_TARGET, or name one of TRANSFER_TARGETS');
  }
}

/** One call of GET /api/calls. */
function listed(call: LiveCall): Record<string, string | undefined> {
  return {
    sessionId: call.sessionId,
    direction: call.direction,
    from: maskedOrNone(call.from),
    to: maskedOrNone(call.to),
    startedAt: call.startedAt,
    phase: call.phase,
    replica: call.replica,
  };
}

/** Why a transfer has nowhere to go, naming the targets there are: an example's "support" may be none of this Hotline's. */
function noDestination(target: string | undefined, targets: { readonly default: boolean; readonly named: readonly string[] }): string {
  const named = targets.named.length > 0 ? `the named ones are ${targets.named.join(', ')}` : 'none is named';
  if (target !== undefined) {
    return (
      `no transfer target named "${target}": ${named} (TRANSFER_TARGETS, or transfer_targets in system.md)` +
      (targets.default ? '; without "target" the call goes to TRANSFER_TARGET' : '')
    );
  }
  return `no transfer target: TRANSFER_TARGET is not set; set it, or name one of the targets in "target" (${named})`;
}

/** The typed errors of the outbound client carry the status Hotline's API should answer with. */
function statusOf(error: unknown): number {
  if (error instanceof HotlineError && 'status' in error && typeof error.status === 'number') return error.status;
  return 502;
}
