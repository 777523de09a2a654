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

/**
 * A user name that is a key, not a name (`https://ghp_16C7e42F292c6912E7710c@host`): long, of
 * letters and digits mixed. `postgres`, `hotline` or `app_user` are names, and shown.
 */
export function looksLikeToken(userName: string): boolean {
  return userName.length >= 12 && /[A-Za-z]/.test(userName) && /[0-9]/.test(userName);
}

/**
 * `http://user:pass@host/v1` → `http://user:***@host/v1`: the password is hidden, nothing else
 * (`postgres://postgres@localhost/hotline` is shown as it is). Only a lone user name that is a
 * key is hidden too: `https://***@host`.
 */
export function redactUrlCredentials(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(URL_CREDENTIALS, (match, scheme: string, userInfo: string) => {
    const colon = userInfo.indexOf(':');
    if (colon >= 0) return `${scheme}${userInfo.slice(0, colon)}:***@`;
    return looksLikeToken(safeDecode(userInfo)) ? `${scheme}***@` : match;
  });
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export interface ScrubberOptions {
  /**
   * Secrets shorter than this are not looked for at all (default: every one, the short ones
   * only where they stand alone). Texts that others read, such as tool answers, set it: there
   * even a word standing alone is worth more than a three-character "secret".
   */
  readonly minLength?: number;
}

/**
 * A function that removes the given secrets and URL credentials from a text. The secrets are
 * also looked for as they appear inside a JSON string and inside a URL, which is how they reach
 * a log line, and base64-encoded inside something else (`Basic base64(user:secret)`); a secret
 * that is itself a Basic credential is also looked for decoded. Without secrets it only looks
 * for URL credentials, after one `includes('@')`.
 */
export function createScrubber(secrets: readonly string[], options: ScrubberOptions = {}): (text: string) => string {
  const forms = new Set<string>();
  for (const secret of secrets.flatMap(withDecodedCredential)) {
    if (!secret || secret.length < (options.minLength ?? 0)) continue;
    for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]) forms.add(form);
    if (secret.length >= SHORT_SECRET) for (const form of base64Cores(secret)) forms.add(form);
  }
  if (forms.size === 0) return redactUrlCredentials;
  // Longest first, so a secret that contains another is replaced whole.
  const alternatives = [...forms]
    .sort((a, b) => b.length - a.length)
    .map((form) => (form.length < SHORT_SECRET ? `(?<![\\w-])${escapeRegExp(form)}(?![\\w-])` : escapeRegExp(form)));
  const pattern = new RegExp(alternatives.join('|'), 'g');
  return (text) => redactUrlCredentials(text.replace(pattern, REDACTED));
}

/**
 * The parts of base64 that only the secret's bytes decide, at each of the three byte offsets
 * it can start at inside a longer encoded text (standard and URL-safe alphabets): found
 * whatever came before it, such as the user name of a Basic credential.
 */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Each character carries 6 bits: the first and last may mix the secret's bits with its neighbours'.
    const core = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

const BASE64 = /^[A-Za-z0-9+/]{8,}={0,2}$/;

/** A secret that is a Basic credential (`base64(user:password)`) is also its decoded text and its password. */
function withDecodedCredential(secret: string): string[] {
  if (!BASE64.test(secret) || secret.length % 4 !== 0) return [secret];
  const decoded = Buffer.from(secret, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  // Printable text with a colon; anything else was no credential, only looked like base64.
  if (colon < 0 || !/^[\x20-\x7e\u00a0-\uffff]+$/.test(decoded) || decoded.includes('\ufffd')) return [secret];
  return [secret, decoded, decoded.slice(colon + 1)];
}

export interface LoggerOptions {
  level: string;
  env: string;
  /** Values that must never appear in a log line (see secretsOf in config.ts). */
  secrets?: readonly string[];
  /** Where the JSON lines go; the default is stdout (pretty at a terminal outside production). */
  destination?: DestinationStream;
  /** Personal data out of the words a line carries (its `text` and `arguments`), as everywhere words are written. */
  redact?: (text: string) => string;
}

/** Words a log line carries are redacted field by field: a whole line's digits (times, ids) are not words. */
function redactedWords(redact: (text: string) => string): (object: Record<string, unknown>) => Record<string, unknown> {
  return (object) => {
    if (typeof object.text !== 'string' && typeof object.arguments !== 'string') return object;
    const out = { ...object };
    if (typeof out.text === 'string') out.text = redact(out.text);
    if (typeof out.arguments === 'string') out.arguments = redact(out.arguments);
    return out;
  };
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
    ...(options.redact ? { formatters: { log: redactedWords(options.redact) } } : {}),
    // At a terminal the startup announcement's URLs are read in its message, one per line: the same
    // URLs again as fields under it (kept in the JSON, where programs read them) are left out.
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service,websocketUrl,webhookUrl,healthUrl,dashboardUrl' },
          },
        }
      : {}),
  };
  if (options.destination) return pino(settings, options.destination);
  if (pretty) return pino(settings);
  // Written off the event loop (pino's default writes stdout synchronously, a syscall per line on the
  // call's thread); what is still buffered is written out when the process exits.
  return pino(settings, pino.destination({ dest: 1, sync: false }));
}
