/**
 * Where the command-line tools find the running Hotline when no --url is
 * given: at BOT_URL, else where Hotline itself listens as configured (HOST and
 * PORT, from the environment or .env, the same values `npm start` reads), else
 * at http://localhost:3000. So a PORT=3300 in .env reaches the Hotline started
 * with it, and the call, campaign and simulate commands agree on the address.
 */
import { UsageError } from './command-line.js';

export interface HotlineAddress {
  /** http(s)://host:port, without a trailing slash. */
  url: string;
  /** Where the address came from, for a message about an unreachable Hotline; '' when the user gave it. */
  from: string;
}

const DEFAULT_PORT = 3000;
/** HOST values that mean "every interface": the tools reach those through localhost. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '::0', 'localhost']);

/** The running Hotline's HTTP address; UsageError when BOT_URL or PORT cannot be one. */
export function hotlineAddress(env: Record<string, string | undefined>): HotlineAddress {
  const botUrl = nonEmpty(env.BOT_URL);
  if (botUrl !== undefined) return { url: httpUrl(botUrl, 'BOT_URL'), from: '' };
  const rawPort = nonEmpty(env.PORT);
  const host = hostOf(nonEmpty(env.HOST));
  if (rawPort === undefined) return { url: `http://${host}:${DEFAULT_PORT}`, from: 'the default: set BOT_URL or PORT if Hotline runs elsewhere' };
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`PORT=${rawPort} is not a port number: fix PORT (in the environment or .env), or give Hotline's address with --url or BOT_URL`);
  }
  if (port === 0) {
    throw new UsageError("PORT=0 lets Hotline pick any free port, which only its log shows: give Hotline's address with --url or BOT_URL");
  }
  return { url: `http://${host}:${port}`, from: `from PORT=${port}` };
}

/** Hotline's WebSocket, /ws at the address above (wss:// for an https:// BOT_URL). */
export function hotlineWebSocketUrl(env: Record<string, string | undefined>): string {
  const url = new URL(hotlineAddress(env).url);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  // A BOT_URL behind a proxy may carry a path of its own: /ws goes below it.
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/ws`;
  return url.href;
}

/** `raw` as an http(s) URL without a trailing slash; UsageError naming `source` otherwise. */
export function httpUrl(raw: string, source: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${source} "${raw}" is not a URL: give Hotline's address, e.g. http://localhost:3000`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${source} must be an http:// or https:// address, not ${raw}`);
  return url.href.replace(/\/+$/, '');
}

/** The host part of the URL: HOST when Hotline listens on one address only, else localhost. */
function hostOf(host: string | undefined): string {
  if (host === undefined || WILDCARD_HOSTS.has(host)) return 'localhost';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
