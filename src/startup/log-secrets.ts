import { secretsOf, type Config } from '../config.js';
import { looksLikeToken } from '../logger.js';

/** Passwords shorter than this are hidden where they stand in their URL only: elsewhere they would hit ordinary words. */
const DISTINCT_CHARS = 8;

/**
 * Everything the logs must never show: the configured secrets, and the password of any configured
 * URL (`DATABASE_URL=postgres://app:s3cret-word@db/hotline`) also where it appears outside the URL,
 * e.g. in an error message that quotes it. In the URL itself every log line hides it anyway
 * (redactUrlCredentials); the user name, the scheme and the rest are shown.
 */
export function logSecrets(config: Config): string[] {
  const urls = [config.llm.baseURL, config.outbound.apiUrl, config.publicUrl, config.databaseUrl, config.reports.webhookUrl, config.tracing?.url];
  return [...new Set([...secretsOf(config), ...urls.flatMap(urlSecrets)])];
}

/**
 * The URL's password, looked for everywhere only when nothing else would be hit with it: it is
 * long enough, not letters alone (a word such as "password"), and not a part of the URL besides
 * (`postgres://postgres:postgres@postgres/postgres`: "postgres" is everywhere in the logs).
 */
function urlSecrets(raw: string | undefined): string[] {
  if (!raw || !URL.canParse(raw)) return [];
  const url = new URL(raw);
  // A lone user name that is a key is the URL's secret; a name is not.
  const secret = url.password || (looksLikeToken(decode(url.username)) ? url.username : '');
  if (!secret) return [];
  url.password = '';
  if (url.username === secret) url.username = '';
  const rest = decode(url.toString()).toLowerCase();
  return [...new Set([secret, decode(secret)])].filter(
    (form) => form.length >= DISTINCT_CHARS && !/^\p{L}+$/u.test(form) && !rest.includes(form.toLowerCase()),
  );
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
