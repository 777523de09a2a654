/**
 * What of a call's words is kept, and what leaves the process: redaction, retention and
 * OpenTelemetry traces. A group of config.ts's environment schema, kept with the part of `Config`
 * it fills so that every setting touching personal data is read in one place.
 */
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { parseRedactPatterns, RedactPatternError, type RedactPattern, type RedactionOptions } from './privacy/redaction.js';
import { RETENTION_DEFAULT_VARIABLE, RETENTION_VARIABLES, retentionSettingsFromEnv, type RetentionSettings } from './privacy/retention.js';
import { tracingSettingsFrom, type TracingSettings } from './telemetry/tracing-settings.js';
import { boolean, text, url } from './config-values.js';

export const PrivacyEnv = z.object({
  REDACT_CARDS: boolean('REDACT_CARDS', true),
  REDACT_IBANS: boolean('REDACT_IBANS', true),
  REDACT_PATTERNS: text.optional(),
  REDACT_FROM_MODEL: boolean('REDACT_FROM_MODEL', false),
  // OpenTelemetry's standard variables (src/telemetry/tracing-settings.ts), and Hotline's content switch.
  OTEL_SDK_DISABLED: text.optional(),
  OTEL_TRACES_EXPORTER: text.optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: url('OTEL_EXPORTER_OTLP_ENDPOINT', 'http://localhost:4318'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'http://localhost:4318/v1/traces'),
  OTEL_EXPORTER_OTLP_HEADERS: text.optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: text.optional(),
  OTEL_SERVICE_NAME: text.min(1).default('hotline'),
  OTEL_INCLUDE_CONTENT: boolean('OTEL_INCLUDE_CONTENT', false),
  // Read, checked and turned into days by retentionSettingsFromEnv; listed so the schema names every variable.
  ...Object.fromEntries([RETENTION_DEFAULT_VARIABLE, ...Object.values(RETENTION_VARIABLES)].map((name) => [name, text.optional()])),
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
