import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { CallControl } from '../call/ports/call-control.js';
import { checkSecret, type SecretGate } from './auth.js';
import { HttpError } from './http-error.js';

/** The header a replica presents to another: the cluster's shared secret. */
export const CLUSTER_SECRET_HEADER = 'x-hotline-cluster-secret';

/**
 * Only another replica, by the cluster's secret (compared in constant time). A wrong one spends the
 * address's failure budget, the one every other secret spends: guessing it is no faster than any other.
 */
export function requireClusterSecret(secret: string, gate: SecretGate) {
  return async function authenticatePeer(req: Request, _res: Response, next: NextFunction): Promise<void> {
    await checkSecret(req, gate, req.get(CLUSTER_SECRET_HEADER), secret, 'cluster secret');
    next();
  };
}

const ControlBody = z.object({ target: z.string().min(1).max(64).optional() });

/**
 * What replicas ask of each other besides webhook events: an operator's transfer or hangup, made on
 * a replica that does not hold the call, carried out by the one that does. Answers the outcome.
 */
export function internalApiRouter(options: { secret: string; gate: SecretGate; control: CallControl }): Router {
  const router = express.Router();
  const json = express.json({ limit: '4kb' });
  router.post('/internal/calls/:sessionId/transfer', requireClusterSecret(options.secret, options.gate), json, async (req, res) => {
    const body = ControlBody.safeParse(req.body ?? {});
    if (!body.success) throw new HttpError(400, 'invalid body');
    res.json({ outcome: await options.control.transfer(String(req.params.sessionId), body.data.target) });
  });
  router.post('/internal/calls/:sessionId/hangup', requireClusterSecret(options.secret, options.gate), async (req, res) => {
    res.json({ outcome: await options.control.hangUp(String(req.params.sessionId)) });
  });
  return router;
}
