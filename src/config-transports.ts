/**
 * The call transports' settings: which of the WebSocket and the webhook are served, and how each
 * behaves. A group of config.ts's environment schema, kept with the part of `Config` it fills so
 * that a transport's variable, its type and its mapping are changed in one place.
 */
import { z } from 'zod';
import { int } from './config-values.js';

export type Transport = 'websocket' | 'webhook';

/** A comma-separated list of transports; with an empty default, none (or `none`) is allowed. */
const transportList = (name: string, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((raw, ctx) => {
      const names = raw.split(',').map((p) => p.trim().toLowerCase()).filter(Boolean);
      const bad = names.filter((n) => n !== 'websocket' && n !== 'webhook' && n !== 'none');
      const kept = names.filter((n) => n !== 'none');
      if (bad.length > 0 || (fallback !== '' && kept.length === 0)) {
        ctx.addIssue({ code: 'custom', message: `${name} must name websocket, webhook or both, separated by a comma` });
        return z.NEVER;
      }
      return new Set(kept as Transport[]);
    });

export const TransportsEnv = z.object({
  TRANSPORTS: transportList('TRANSPORTS', 'websocket,webhook'),
  WS_START_TIMEOUT_MS: int('WS_START_TIMEOUT_MS', 1, 5000, ' of milliseconds'),
  WS_PING_INTERVAL_MS: int('WS_PING_INTERVAL_MS', 0, 30_000, ' of milliseconds'),
  WS_RECONNECT_GRACE_MS: int('WS_RECONNECT_GRACE_MS', 0, 5000, ' of milliseconds'),
  WEBHOOK_MAX_BYTES: int('WEBHOOK_MAX_BYTES', 1, 64 * 1024, ' of bytes'),
  WEBHOOK_REPLY: z
    .enum(['whole', 'sentences'], { error: 'WEBHOOK_REPLY must be whole or sentences' })
    .default('sentences'),
  WEBHOOK_HOLD_MS: int('WEBHOOK_HOLD_MS', 0, 1000, ' of milliseconds'),
  ACTION_ARRAYS: transportList('ACTION_ARRAYS', ''),
  PLAYBACK_GRACE_MS: int('PLAYBACK_GRACE_MS', 0, 1500, ' of milliseconds'),
});

export interface TransportsConfig {
  /** The call transports served; a deployment switches off the one it does not use. */
  transports: ReadonlySet<Transport>;
  websocket: {
    startTimeoutMs: number;
    pingIntervalMs: number;
    /** A socket that drops without a close handshake: its call waits this long for the service to reconnect. */
    reconnectGraceMs: number;
  };
  /** Largest event accepted, by webhook (413) or WebSocket (close 1009). */
  maxEventBytes: number;
  webhookReply: 'whole' | 'sentences';
  /** A webhook request that waits this long for the model gets the hold line (prompts/thinking.md); 0 never. */
  webhookHoldMs: number;
  /** Transports whose answers may carry several actions at once (production service only). */
  actionArrays: ReadonlySet<Transport>;
  /** How long past the estimated end of playback a hangup or transfer waits for assistant_speech_ended. */
  playbackGraceMs: number;
}

export function transportsConfigOf(e: z.infer<typeof TransportsEnv>): TransportsConfig {
  return {
    transports: e.TRANSPORTS,
    websocket: {
      startTimeoutMs: e.WS_START_TIMEOUT_MS,
      pingIntervalMs: e.WS_PING_INTERVAL_MS,
      reconnectGraceMs: e.WS_RECONNECT_GRACE_MS,
    },
    maxEventBytes: e.WEBHOOK_MAX_BYTES,
    webhookReply: e.WEBHOOK_REPLY,
    webhookHoldMs: e.WEBHOOK_HOLD_MS,
    actionArrays: e.ACTION_ARRAYS,
    playbackGraceMs: e.PLAYBACK_GRACE_MS,
  };
}
