/**
 * Whether calls are traced, and where the spans go, from the standard OpenTelemetry variables as
 * config.ts read them. Nothing here loads OpenTelemetry: the configuration is read by every start,
 * traced or not.
 */

export interface TracingSettings {
  /** Where spans are POSTed, as OTLP/HTTP JSON: the whole URL, `/v1/traces` included. */
  readonly url: string;
  /**
   * OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS as written (`key=value,…`,
   * values URL-encoded); the exporter's own parser reads them, the traces' own over the general.
   */
  readonly headers: { readonly general: string | undefined; readonly traces: string | undefined };
  /** OTEL_SERVICE_NAME: `service.name` of every span. */
  readonly serviceName: string;
  /** `service.instance.id`: the replica's name. */
  readonly serviceInstanceId: string;
  /** OTEL_INCLUDE_CONTENT: words, numbers, tool arguments and results in spans (redacted as the logs are). */
  readonly includeContent: boolean;
}

export interface TracingVariables {
  readonly OTEL_SDK_DISABLED?: string | undefined;
  readonly OTEL_TRACES_EXPORTER?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_HEADERS?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_TRACES_HEADERS?: string | undefined;
  readonly OTEL_SERVICE_NAME: string;
  readonly OTEL_INCLUDE_CONTENT: boolean;
}

/** OTLP/HTTP's path for traces, added to OTEL_EXPORTER_OTLP_ENDPOINT (the signal's own endpoint is used as it is). */
const TRACES_PATH = 'v1/traces';

/** A header value shorter than this is taken for a setting, not a key. */
const MIN_SECRET_CHARS = 8;

/**
 * The settings, or undefined when nothing asks for traces: no endpoint set, OTEL_SDK_DISABLED=true,
 * or OTEL_TRACES_EXPORTER=none. Off by default: a Hotline nobody points at a collector loads no
 * OpenTelemetry at all.
 */
export function tracingSettingsFrom(env: TracingVariables, serviceInstanceId: string): TracingSettings | undefined {
  // The specification's words: only "true" (in any case) disables the SDK.
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').map((name) => name.trim().toLowerCase());
  if (exporters.includes('none')) return undefined;
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? withTracesPath(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (url === undefined) return undefined;
  return {
    url,
    headers: { general: env.OTEL_EXPORTER_OTLP_HEADERS, traces: env.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    serviceName: env.OTEL_SERVICE_NAME,
    serviceInstanceId,
    includeContent: env.OTEL_INCLUDE_CONTENT,
  };
}

function withTracesPath(endpoint: string | undefined): string | undefined {
  if (endpoint === undefined) return undefined;
  return endpoint.endsWith('/') ? `${endpoint}${TRACES_PATH}` : `${endpoint}/${TRACES_PATH}`;
}

/**
 * The header values, for the logs to leave out: a collector's header is usually its API key. Read
 * loosely (any text after the first `=` of each pair, as written and decoded), so that a value the
 * exporter's stricter parser might refuse is still kept out of the logs. Short values (a tenant's
 * `prod`) are no key, and as secrets they would take that word out of every log line.
 */
export function headerSecrets(settings: TracingSettings | undefined): string[] {
  if (!settings) return [];
  const values: string[] = [];
  for (const raw of [settings.headers.general, settings.headers.traces]) {
    for (const pair of (raw ?? '').split(',')) {
      const equals = pair.indexOf('=');
      if (equals < 0) continue;
      const value = pair.slice(equals + 1).trim();
      if (value.length < MIN_SECRET_CHARS) continue;
      values.push(value, decoded(value));
    }
  }
  return values;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
