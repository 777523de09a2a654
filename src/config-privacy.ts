/**
 * What of a call's words is kept, and what leaves the process: redaction, retention and
 * OpenTelemetry traces. A group of config.ts's environment schema, kept with the part of `Config`
 * it fills so that every setting touching personal data is read in one place.
 */
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { parseRedactPatterns, RedactPatternError, type RedactPattern, type RedactionOptions } from './privacy/redaction.js';
import {
  RETENTION_DEFAULT_VARIABLE,
  RETENTION_KINDS,
  RETENTION_VARIABLES,
  retentionSettingsFromEnv,
  type RetentionKind,
  type RetentionSettings,
} from './privacy/retention.js';
import { tracingSettingsFrom, type TracingSettings } from './telemetry/tracing-settings.js';
import { boolean, text, url } from './config-values.js';
import { variableDocs, type VariableDoc } from './config-sections.js';

/** What each kind's own RETENTION_<KIND>_DAYS keeps, beyond what RETENTION_DAYS says of them all. */
const RETENTION_DOCS: Record<RetentionKind, Omit<VariableDoc, 'section'>> = {
  transcripts: { doc: "Days the transcript files are kept (at least a day), overriding RETENTION_DAYS; forever keeps them." },
  reports: { doc: "Days calls' reports are kept (at least a day), overriding RETENTION_DAYS; forever keeps them." },
  calls: { doc: "Days calls' records are kept (at least a day), overriding RETENTION_DAYS; forever keeps them." },
  deliveries: { doc: "Days reports' deliveries are kept, overriding RETENTION_DAYS; forever keeps them." },
  campaigns: {
    doc: "Days done campaigns' contacts and results are kept (a running or paused campaign keeps its contacts), overriding RETENTION_DAYS; forever keeps them.",
  },
  audit: { doc: 'Days the audit log of staff actions is kept, overriding RETENTION_DAYS; forever keeps it.', example: '365' },
};

export const PrivacyEnv = z.object({
  REDACT_CARDS: boolean('REDACT_CARDS', true).register(variableDocs, {
    section: 'privacy',
    doc: `Card numbers (Luhn-checked) are redacted from the caller's words (and Hotline's own) as they arrive, before
      anything is written: transcripts, the store, the dashboard, reports and logs; also when said digit by digit
      ("four one one one …").`,
  }),
  REDACT_IBANS: boolean('REDACT_IBANS', true).register(variableDocs, {
    section: 'privacy',
    doc: 'IBANs (checksum-checked) are redacted the same way, also when said digit by digit.',
  }),
  REDACT_PATTERNS: text.optional().register(variableDocs, {
    section: 'privacy',
    doc: 'More patterns, each `name=regex` (matches become [name]), separated by new lines or `;;`.',
    example: String.raw`dob=\b\d{1,2}\.\d{1,2}\.(19|20)\d{2}\b;;customer=KD-\d{6}`,
  }),
  REDACT_FROM_MODEL: boolean('REDACT_FROM_MODEL', false).register(variableDocs, {
    section: 'privacy',
    doc: `true: the model gets the redacted words too. false: within the call it hears what the caller said (it may
      need the number to act on it); nothing written keeps it.`,
  }),
  // OpenTelemetry's standard variables (src/telemetry/tracing-settings.ts), and Hotline's content switch.
  OTEL_SDK_DISABLED: text.optional().register(variableDocs, {
    section: 'tracing',
    doc: 'true: no traces, whatever else is set.',
    example: 'true',
    unsetMeans: 'false',
  }),
  OTEL_TRACES_EXPORTER: text.optional().register(variableDocs, {
    section: 'tracing',
    doc: 'none does the same as OTEL_SDK_DISABLED=true; otlp (or unset) sends them.',
    example: 'none',
    unsetMeans: 'otlp',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: url('OTEL_EXPORTER_OTLP_ENDPOINT', 'http://localhost:4318').register(variableDocs, {
    section: 'tracing',
    doc: "The collector's base URL; Hotline adds /v1/traces.",
    example: 'http://localhost:4318',
    unsetMeans: 'no traces (unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set)',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'http://localhost:4318/v1/traces').register(variableDocs, {
    section: 'tracing',
    doc: "The traces' own full URL, used as it is (over OTEL_EXPORTER_OTLP_ENDPOINT).",
    example: 'http://localhost:4318/v1/traces',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: text.optional().register(variableDocs, {
    section: 'tracing',
    doc: 'Headers for the collector, key=value separated by commas (values URL-encoded); kept out of the logs.',
    example: 'x-api-key=...',
  }),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: text.optional().register(variableDocs, {
    section: 'tracing',
    doc: "The traces' own headers, in the same form, over OTEL_EXPORTER_OTLP_HEADERS'.",
  }),
  OTEL_SERVICE_NAME: text.min(1).default('hotline').register(variableDocs, {
    section: 'tracing',
    doc: 'service.name of the spans.',
  }),
  OTEL_INCLUDE_CONTENT: boolean('OTEL_INCLUDE_CONTENT', false).register(variableDocs, {
    section: 'tracing',
    doc: `true: the caller's words, Hotline's sentences, the phone numbers and the tools' arguments and results go into
      spans too (redacted as the logs are). They are personal data: by default spans carry none.`,
  }),
  // Read, checked and turned into days by retentionSettingsFromEnv; listed so the schema names every variable.
  [RETENTION_DEFAULT_VARIABLE]: text.optional().register(variableDocs, {
    section: 'privacy',
    doc: `Days each kind of personal data is kept, for every kind without a value of its own; a sweep off the call
      path deletes what is older (hourly, counts in the log). A positive number of days, fractions allowed (0.5 is 12
      hours). Calls, reports and transcripts stay a day at least (a call's report may still be made). The stop list is
      never swept.`,
    example: '90',
    unsetMeans: 'everything is kept until erased',
  }),
  ...Object.fromEntries(
    RETENTION_KINDS.map((kind) => [RETENTION_VARIABLES[kind], text.optional().register(variableDocs, { section: 'privacy', unsetMeans: 'RETENTION_DAYS', ...RETENTION_DOCS[kind] })]),
  ),
});


export interface PrivacyConfig {
  privacy: {
    /** What is redacted from the caller's words (and Hotline's) before anything is written. */
    redaction: RedactionOptions;
    /** Whether the model gets the redacted words too; by default it gets what the caller said, within the call. */
    redactFromModel: boolean;
    /** Days each kind of personal data is kept (undefined: kept until erased). */
    retention: RetentionSettings;
  };
  /** OpenTelemetry traces of every call, over OTLP/HTTP; undefined (the default) traces nothing and loads none of it. */
  tracing: TracingSettings | undefined;
}

function redactPatterns(text: string | undefined): RedactPattern[] {
  try {
    return parseRedactPatterns(text ?? '');
  } catch (error) {
    if (error instanceof RedactPatternError) throw new ConfigError(`REDACT_PATTERNS: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * `env` is the environment without its empty values, where the retention variables are read;
 * `replicaId` names this process in its traces.
 */
export function privacyConfigOf(e: z.infer<typeof PrivacyEnv>, env: Record<string, string>, replicaId: string): PrivacyConfig {
  return {
    privacy: {
      redaction: { cards: e.REDACT_CARDS, ibans: e.REDACT_IBANS, patterns: redactPatterns(e.REDACT_PATTERNS) },
      redactFromModel: e.REDACT_FROM_MODEL,
      retention: retentionSettingsFromEnv(env),
    },
    tracing: tracingSettingsFrom(e, replicaId),
  };
}
