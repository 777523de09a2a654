import express, { type Router } from 'express';
import { z } from 'zod';
import type { Logger } from '../logger.js';
import type { AiFlowClient } from '../outbound/aiflow-client.js';
import { normalizePhoneNumber } from '../outbound/phone-number.js';
import type { PendingCalls } from '../outbound/pending-calls.js';
import { HotlineError } from '../errors.js';
import { describeIssues } from '../protocol/parse-event.js';
import { requireAdminToken } from './auth.js';
import { HttpError } from './http-error.js';

export interface AdminApiOptions {
  token: string | undefined;
  /** Undefined when AIFLOW_API_URL / AIFLOW_ACCESS_TOKEN are not set. */
  client: AiFlowClient | undefined;
  pendingCalls: PendingCalls;
  defaults: { aiFlowId: string | undefined; billingDevice: string | undefined; countryCode: string | undefined };
  logger: Logger;
}

const variableValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);

const StartCallBodySchema = z.strictObject({
  toPhoneNumber: z.union([z.string(), z.number()]).transform(String),
  variables: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'variable names are letters, digits, _ . -'), variableValue).optional(),
  aiFlowId: z.string().trim().min(1).optional(),
  billingDevice: z.string().trim().min(1).optional(),
});

/** Hotline's own API: POST /api/calls places an outbound call with a greeting made for the person called. */
export function adminApiRouter(options: AdminApiOptions): Router {
  const router = express.Router();
  const { logger } = options;

  router.post(
    '/api/calls',
    requireAdminToken(options.token),
    function requireJson(req, _res, next) {
      if (!req.is('application/json')) throw new HttpError(415, 'Content-Type must be application/json');
      next();
    },
    express.json({ limit: '16kb' }),
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
      const aiFlowId = body.aiFlowId ?? options.defaults.aiFlowId;
      const billingDevice = body.billingDevice ?? options.defaults.billingDevice;
      if (!aiFlowId) throw new HttpError(400, 'no AI flow: pass aiFlowId or set AIFLOW_ID');
      if (!billingDevice) throw new HttpError(400, 'no billing device: pass billingDevice or set AIFLOW_BILLING_DEVICE');
      if (!options.client) {
        throw new HttpError(503, 'outbound calls are not configured: set AIFLOW_API_URL and AIFLOW_ACCESS_TOKEN');
      }

      // Remembered before the request: the call may be answered before the service's 201 arrives.
      const pending = options.pendingCalls.add(toPhoneNumber, body.variables ?? {});
      try {
        await options.client.startCall({ aiFlowId, billingDevice, toPhoneNumber });
      } catch (error) {
        options.pendingCalls.remove(pending);
        logger.warn({ err: error, aiFlowId, toPhoneNumber }, 'outbound call refused');
        throw new HttpError(statusOf(error), error instanceof Error ? error.message : 'outbound call failed', { cause: error });
      }
      logger.info({ aiFlowId, toPhoneNumber, variables: Object.keys(body.variables ?? {}) }, 'outbound call initiated');
      res.status(201).json({ toPhoneNumber, status: 'initiated' });
    },
  );
  return router;
}

/** The typed errors of the outbound client carry the status Hotline's API should answer with. */
function statusOf(error: unknown): number {
  if (error instanceof HotlineError && 'status' in error && typeof error.status === 'number') return error.status;
  return 502;
}
