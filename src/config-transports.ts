/**
 * The call transports' settings: which of the WebSocket and the webhook are served, and how each
 * behaves. A group of config.ts's environment schema, kept with the part of `Config` it fills so
 * that a transport's variable, its type and its mapping are changed in one place.
 */
import { z } from 'zod';
import { int } from './config-values.js';
import { variableDocs } from './config-sections.js';

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
  TRANSPORTS: transportList('TRANSPORTS', 'websocket,webhook').register(variableDocs, {
    section: 'server',
    doc: 'Call transports served: websocket, webhook or both, separated by a comma. A transport that is off answers 404.',
  }),
  WS_START_TIMEOUT_MS: int('WS_START_TIMEOUT_MS', 1, 5000, ' of milliseconds').register(variableDocs, {
    section: 'security',
    doc: `A WebSocket that has not sent session_start within this many milliseconds (also after its call ended) is
      closed; every open socket counts against MAX_CALLS.`,
  }),
  WS_PING_INTERVAL_MS: int('WS_PING_INTERVAL_MS', 0, 30_000, ' of milliseconds').register(variableDocs, {
    section: 'security',
    doc: `Every open WebSocket is pinged this often, in milliseconds; one that did not answer the previous ping is
      dropped and its call ended. 0 never.`,
  }),
  WS_RECONNECT_GRACE_MS: int('WS_RECONNECT_GRACE_MS', 0, 5000, ' of milliseconds').register(variableDocs, {
    section: 'security',
    doc: `A WebSocket that breaks without a close handshake: its call waits this many milliseconds for the service to
      reconnect and take it over, then ends. 0 ends it at once.`,
  }),
  WEBHOOK_MAX_BYTES: int('WEBHOOK_MAX_BYTES', 1, 64 * 1024, ' of bytes').register(variableDocs, {
    section: 'security',
    doc: `Largest event accepted, in bytes: larger webhook bodies get 413, larger WebSocket messages close that socket
      with code 1009.`,
  }),
  WEBHOOK_REPLY: z
    .enum(['whole', 'sentences'], { error: 'WEBHOOK_REPLY must be whole or sentences' })
    .default('sentences')
    .register(variableDocs, {
      section: 'security',
      doc: `How a webhook answers user_speak: whole (one speak with the whole reply, when the LLM is done) or sentences
        (the first sentence as soon as it exists, the rest in the answers to the following assistant_speech_ended
        events). docs/webhook.md weighs the two.`,
    }),
  WEBHOOK_HOLD_MS: int('WEBHOOK_HOLD_MS', 0, 1000, ' of milliseconds').register(variableDocs, {
    section: 'security',
    doc: `A webhook request still waiting for the model after this many milliseconds is answered with the hold line
      (prompts/thinking.md); the reply follows on the next assistant_speech_ended. 0 never.`,
  }),
  ACTION_ARRAYS: transportList('ACTION_ARRAYS', '').register(variableDocs, {
    section: 'security',
    doc: `Transports whose answers may carry several actions at once, e.g. [barge_in, speak] (the production service
      runs them in order; the spec allows one): websocket, webhook, both (websocket,webhook), or none.`,
    defaultSpelled: 'none',
  }),
  PLAYBACK_GRACE_MS: int('PLAYBACK_GRACE_MS', 0, 1500, ' of milliseconds').register(variableDocs, {
    section: 'transfers',
    doc: `How long past the estimated end of the last sentence a hangup or transfer waits for assistant_speech_ended
      before it is sent anyway, in milliseconds.`,
  }),
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
