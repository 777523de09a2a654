/**
 * What happens around a call's conversation: the report after it, the mailbox an outbound call may
 * reach, the transfer to a person, and the outbound calls themselves. A group of config.ts's
 * environment schema, kept with the part of `Config` it fills and the checks those features need.
 */
import { z } from 'zod';
import { ConfigError } from './errors.js';
import type { Transport } from './config-transports.js';
import { boolean, int, text, url } from './config-values.js';
import { variableDocs } from './config-sections.js';

// "sales=4930111,support=4940222" → { sales: '4930111', support: '4940222' }
const namedTargets = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const targets: Record<string, string> = {};
    for (const pair of (raw ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
      const [name, target] = pair.split('=').map((p) => p.trim());
      if (!name || !target) {
        ctx.addIssue({ code: 'custom', message: `TRANSFER_TARGETS: "${pair}" is not name=number (e.g. sales=4930111111)` });
        continue;
      }
      targets[name] = target;
    }
    return targets;
  });

const transferTimeoutError = 'TRANSFER_TIMEOUT_SECONDS must be a whole number of seconds, 5–120';

export const CallsEnv = z.object({
  REPORT_WEBHOOK_URL: url('REPORT_WEBHOOK_URL', 'https://crm.example.com/hotline-reports').register(variableDocs, {
    section: 'reports',
    doc: `Where each call's report is POSTed. Retried with backoff until it is delivered (for up to
      REPORT_WEBHOOK_GIVE_UP_MS), across restarts.`,
    example: 'https://crm.example.com/hotline-reports',
    unsetMeans: 'reports are kept in the database only',
  }),
  REPORT_WEBHOOK_SECRET: text.optional().register(variableDocs, {
    section: 'reports',
    doc: `Required with REPORT_WEBHOOK_URL: each delivery carries X-Hotline-Signature: sha256=<HMAC-SHA256 of
      "<X-Hotline-Timestamp>.<body>"> made with this secret, for the receiver to check. At least 16 characters: anyone
      who sees one signed report could try short keys offline.`,
  }),
  REPORT_WEBHOOK_GIVE_UP_MS: int('REPORT_WEBHOOK_GIVE_UP_MS', 1, 24 * 60 * 60 * 1000, ' of milliseconds').register(variableDocs, {
    section: 'reports',
    doc: `How long a report's delivery is retried before it is given up, in milliseconds (the default is a day). One
      given up is kept, shown on the dashboard, and sent again with "Deliver again" or POST /api/reports/redeliver.`,
  }),
  REPORT_MODEL: text.min(1).optional().register(variableDocs, {
    section: 'reports',
    doc: "The model that writes the report's summary and fields.",
    example: 'gpt-4o-mini',
    unsetMeans: 'LLM_MODEL',
  }),
  REPORT_FIELDS: boolean('REPORT_FIELDS', true).register(variableDocs, {
    section: 'reports',
    doc: `After each call, ask the LLM for the summary and the fields prompts/report.md names (one request per call);
      false stores and delivers reports without them.`,
  }),
  VOICEMAIL_DETECTION: boolean('VOICEMAIL_DETECTION', true).register(variableDocs, {
    section: 'voicemail',
    doc: `Listen to an outbound call's first words for a mailbox ("… is not available, please leave a message after
      the tone", in English, German, French, Spanish, Italian and Dutch; more in prompts/voicemail.yaml). A mailbox
      gets prompts/outbound-voicemail.md after its tone, then the hangup: no conversation.`,
  }),
  VOICEMAIL_JUDGE_MS: int('VOICEMAIL_JUDGE_MS', 100, 2000, ' of milliseconds').register(variableDocs, {
    section: 'voicemail',
    doc: `Words the phrases are unsure of are judged by the LLM, for at most this many milliseconds (at least 100;
      then: a person).`,
  }),
  VOICEMAIL_QUIET_MS: int('VOICEMAIL_QUIET_MS', 100, 1200, ' of milliseconds').register(variableDocs, {
    section: 'voicemail',
    doc: `A mailbox quiet for this many milliseconds (at least 100) has finished its greeting: the message starts
      after its tone.`,
  }),
  VOICEMAIL_MODEL: text.min(1).optional().register(variableDocs, {
    section: 'voicemail',
    doc: 'The model that judges unsure first words (a small, fast one is enough).',
    example: 'gpt-4o-mini',
    unsetMeans: 'LLM_MODEL',
  }),
  TRANSFER_TARGET: text.optional().register(variableDocs, {
    section: 'transfers',
    doc: 'Default destination of the transfer tool (a phone number or whatever the voice service accepts).',
    unsetMeans: 'no default destination',
  }),
  TRANSFER_TARGETS: namedTargets.register(variableDocs, {
    section: 'transfers',
    doc: 'Named destinations the model may choose from, as name=target pairs separated by commas.',
    example: 'sales=4930111111,support=4930222222',
    unsetMeans: 'none',
  }),
  TRANSFER_CALLER_ID_NAME: text.max(64, { error: 'TRANSFER_CALLER_ID_NAME must be at most 64 characters' }).optional().register(variableDocs, {
    section: 'transfers',
    doc: `The caller id name the person who picks up a transfer sees (the production service's caller_id_name), at
      most 64 characters. system.md's front matter may override it.`,
    example: 'Hotline',
    unsetMeans: 'Hotline',
  }),
  TRANSFER_CALLER_ID_NUMBER: text
    .regex(/^\+?[0-9 ()/-]{3,32}$/, { error: 'TRANSFER_CALLER_ID_NUMBER must be a phone number, e.g. 4930123456' })
    .optional()
    .register(variableDocs, {
      section: 'transfers',
      doc: `The caller id number the person who picks up a transfer sees (the production service's caller_id_number).
        system.md's front matter may override it.`,
      example: '4930123456',
      unsetMeans: "the caller's own number",
    }),
  TRANSFER_TIMEOUT_SECONDS: z.coerce
    .number({ error: transferTimeoutError })
    .int({ error: transferTimeoutError })
    .min(5, { error: transferTimeoutError })
    .max(120, { error: transferTimeoutError })
    .optional()
    .register(variableDocs, {
      section: 'transfers',
      doc: 'How long a transfer rings before the call comes back to Hotline, in seconds, 5–120.',
      example: '30',
      unsetMeans: "the voice service's default",
    }),
  AIFLOW_API_URL: url('AIFLOW_API_URL', 'https://api.example.com').register(variableDocs, {
    section: 'outbound',
    doc: `Base URL of the voice service's REST API; Hotline calls {AIFLOW_API_URL}/v3/ai-flows/{id}/call. Outbound calls
      are on when this, AIFLOW_ACCESS_TOKEN and ADMIN_TOKEN are set.`,
  }),
  AIFLOW_ACCESS_TOKEN: text.optional().register(variableDocs, {
    section: 'outbound',
    doc: 'Bearer token for that API. Outbound calling must be enabled for the account by the provider\'s support.',
  }),
  AIFLOW_ID: text.optional().register(variableDocs, {
    section: 'outbound',
    doc: 'Default AI flow that places the calls (a request may name another).',
  }),
  AIFLOW_BILLING_DEVICE: text.optional().register(variableDocs, {
    section: 'outbound',
    doc: 'Default billing device suffix for outbound calls.',
  }),
  AIFLOW_TIMEOUT_MS: int('AIFLOW_TIMEOUT_MS', 1, 10_000, ' of milliseconds').register(variableDocs, {
    section: 'outbound',
    doc: "Time limit for the service's answer to a call request, in milliseconds.",
  }),
  OUTBOUND_TTL_MS: int('OUTBOUND_TTL_MS', 1, 10 * 60 * 1000, ' of milliseconds').register(variableDocs, {
    section: 'outbound',
    doc: `How long a requested call waits for its session_start before its variables are forgotten (until then the
      number counts as in a call and is not dialled again), in milliseconds.`,
  }),
  DEFAULT_COUNTRY_CODE: text.regex(/^\d{1,3}$/, { error: 'DEFAULT_COUNTRY_CODE must be 1–3 digits, e.g. 49' }).optional().register(variableDocs, {
    section: 'outbound',
    doc: `Country code (1–3 digits) for numbers given in national form (0151 1234567 → 49151…) in calls, contact lists
      and stop lists. npm run call reads it too.`,
    example: '49',
    unsetMeans: 'numbers in national form are rejected',
  }),
});


/** Where transfers go, and the caller id the person who picks up sees (production service fields). */
export interface TransferConfig {
  defaultTarget: string | undefined;
  targets: Record<string, string>;
  callerIdName: string | undefined;
  callerIdNumber: string | undefined;
  timeoutSeconds: number | undefined;
}

export interface CallsConfig {
  reports: {
    /** Where each call's report is POSTed, signed with `webhookSecret`; unset keeps reports in the database only. */
    webhookUrl: string | undefined;
    webhookSecret: string | undefined;
    /** How long a delivery is retried before it is given up (it can be sent again from the dashboard or the API). */
    giveUpAfterMs: number;
    /** The model that writes the summary and fields; default LLM_MODEL. */
    model: string | undefined;
    /** Ask the LLM for report.md's summary and fields after each call. */
    fields: boolean;
  };
  voicemail: {
    /** Outbound calls listen for a mailbox in the first words. */
    enabled: boolean;
    /** The longest the model may judge words the phrases are unsure of. */
    judgeMs: number;
    /** A mailbox quiet this long has finished its greeting: the message starts. */
    quietMs: number;
    /** The model that judges unsure first words; default LLM_MODEL. */
    model: string | undefined;
  };
  transfer: TransferConfig;
  outbound: {
    apiUrl: string | undefined;
    accessToken: string | undefined;
    aiFlowId: string | undefined;
    billingDevice: string | undefined;
    timeoutMs: number;
    /** How long a requested call waits for its session_start. */
    ttlMs: number;
    /** For numbers given in national form (0151…). */
    defaultCountryCode: string | undefined;
  };
}

/** What the outbound check reads from the transports' and access's groups besides this one. */
interface OutboundExposure {
  TRANSPORTS: ReadonlySet<Transport>;
  WEBHOOK_SECRET?: string | undefined;
  WS_TOKEN?: string | undefined;
  ADMIN_TOKEN?: string | undefined;
}

/** Refuses what would let a stranger forge a report or claim an outbound call; run before anything is built. */
export function checkCallSecurity(e: z.infer<typeof CallsEnv> & OutboundExposure, production: boolean): void {
  if (e.REPORT_WEBHOOK_URL && !e.REPORT_WEBHOOK_SECRET) {
    // An unsigned report could be forged by anyone who knows the receiver's address.
    throw new ConfigError('REPORT_WEBHOOK_URL is set without REPORT_WEBHOOK_SECRET: set the secret the receiver checks the signature with.');
  }
  const outboundOn = Boolean(e.ADMIN_TOKEN && e.AIFLOW_API_URL && e.AIFLOW_ACCESS_TOKEN);
  if (production && outboundOn) {
    // An open transport lets anyone claim an outbound call's variables by posting its session_start.
    const open = [
      e.TRANSPORTS.has('webhook') && !e.WEBHOOK_SECRET ? 'the webhook (set WEBHOOK_SECRET)' : undefined,
      e.TRANSPORTS.has('websocket') && !e.WS_TOKEN ? 'the WebSocket (set WS_TOKEN)' : undefined,
    ].filter(Boolean);
    if (open.length > 0) {
      throw new ConfigError(
        `Outbound calls are on, but ${open.join(' and ')} ${open.length > 1 ? 'are' : 'is'} open to anyone: ` +
          'secure it, or switch off the transport you do not use with TRANSPORTS=websocket or TRANSPORTS=webhook.',
      );
    }
  }
}

export function callsConfigOf(e: z.infer<typeof CallsEnv>): CallsConfig {
  return {
    reports: {
      webhookUrl: e.REPORT_WEBHOOK_URL,
      webhookSecret: e.REPORT_WEBHOOK_SECRET,
      giveUpAfterMs: e.REPORT_WEBHOOK_GIVE_UP_MS,
      model: e.REPORT_MODEL,
      fields: e.REPORT_FIELDS,
    },
    voicemail: { enabled: e.VOICEMAIL_DETECTION, judgeMs: e.VOICEMAIL_JUDGE_MS, quietMs: e.VOICEMAIL_QUIET_MS, model: e.VOICEMAIL_MODEL },
    transfer: {
      defaultTarget: e.TRANSFER_TARGET,
      targets: e.TRANSFER_TARGETS,
      callerIdName: e.TRANSFER_CALLER_ID_NAME,
      callerIdNumber: e.TRANSFER_CALLER_ID_NUMBER,
      timeoutSeconds: e.TRANSFER_TIMEOUT_SECONDS,
    },
    outbound: {
      apiUrl: e.AIFLOW_API_URL,
      accessToken: e.AIFLOW_ACCESS_TOKEN,
      aiFlowId: e.AIFLOW_ID,
      billingDevice: e.AIFLOW_BILLING_DEVICE,
      timeoutMs: e.AIFLOW_TIMEOUT_MS,
      ttlMs: e.OUTBOUND_TTL_MS,
      defaultCountryCode: e.DEFAULT_COUNTRY_CODE,
    },
  };
}
