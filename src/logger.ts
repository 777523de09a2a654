import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

const REDACTED = '[redacted]';

/**
 * Secrets shorter than this are replaced only where they stand alone: a WS_TOKEN of "abc"
 * must not turn every "abc" inside a word (or a JSON key) into "[redacted]".
 */
const SHORT_SECRET = 8;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Matches the user-info of a URL (`scheme://user:pass@`). Anything up to the first `@` that
 * comes before a path, query or end of the URL; quotes and backslashes end it, so a URL inside
 * a JSON string is cut at the string's end.
 */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@"'\\<>]+)@/gi;

/** `http://user:pass@host/v1` → `http://user:***@host/v1`; a lone user name may be a token: `http://***@host`. */
export function redactUrlCredentials(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(URL_CREDENTIALS, (_match, scheme: string, userInfo: string) => {
    const colon = userInfo.indexOf(':');
    return colon < 0 ? `${scheme}***@` : `${scheme}${userInfo.slice(0, colon)}:***@`;
  });
}

/**
 * A function that removes the given secrets and URL credentials from a text. The secrets are
 * also looked for as they appear inside a JSON string and inside a URL, which is how they reach
 * a log line. Without secrets it only looks for URL credentials, after one `includes('@')`.
 */
export function createScrubber(secrets: readonly string[]): (text: string) => string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]) forms.add(form);
  }
  if (forms.size === 0) return redactUrlCredentials;
  // Longest first, so a secret that contains another is replaced whole.
  const alternatives = [...forms]
    .sort((a, b) => b.length - a.length)
    .map((form) => (form.length < SHORT_SECRET ? `(?<![\\w-])${escapeRegExp(form)}(?![\\w-])` : escapeRegExp(form)));
  const pattern = new RegExp(alternatives.join('|'), 'g');
  return (text) => redactUrlCredentials(text.replace(pattern, REDACTED));
}

export interface LoggerOptions {
  level: string;
  env: string;
  /** Values that must never appear in a log line (see secretsOf in config.ts). */
  secrets?: readonly string[];
  /** Where the JSON lines go; the default is stdout (pretty at a terminal outside production). */
  destination?: DestinationStream;
}

/**
 * Pretty output only for a person at a terminal outside production; JSON everywhere else so
 * log pipelines can parse it.
 */
export function createLogger(options: LoggerOptions): Logger {
  const pretty = !options.destination && options.env !== 'production' && process.stdout.isTTY;
  const scrub = createScrubber(options.secrets ?? []);
  const settings: pino.LoggerOptions = {
    level: options.level,
    base: { service: 'hotline' },
    // Known places of secrets are cut by path; whatever else carries one (an LLM error's message,
    // a stack, a URL with a password) is caught in the finished line, the one place every field,
    // child logger and serializer passes through. Only info and above run on the hot path's
    // edges (call start and end), so one regular expression per line costs nothing that counts.
    redact: {
      paths: ['apiKey', '*.apiKey', 'headers.authorization', '*.headers.authorization', 'headers["x-api-token"]'],
      censor: REDACTED,
    },
    hooks: { streamWrite: scrub },
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service' } } }
      : {}),
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
