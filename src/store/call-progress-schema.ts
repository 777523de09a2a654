/**
 * The call's record as the store, the write journal and the handover between replicas check it:
 * the call core's own schemas (call/ports/call-record-schema.ts), declared there once.
 */
export { CallProgressSchema, CallSoFarSchema, HeardLineSchema, TokenUsageSchema, ToolRunSchema, TurnSchema } from '../call/ports/call-record-schema.js';
