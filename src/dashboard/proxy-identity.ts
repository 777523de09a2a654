/**
 * Who is there, as an authenticating reverse proxy (oauth2-proxy and the like) says in its headers:
 * believed only when the request comes straight from an address TRUST_PROXY names. Anyone else could
 * write those headers themselves.
 */
import type { IncomingMessage } from 'node:http';
import { roleAtLeast, type Who } from '../staff/roles.js';
import type { ProxyAuthSettings } from '../proxy-settings.js';
import type { ProxyTrust } from '../transport/auth.js';

const MAX_NAME = 200;

export function proxyIdentity(settings: ProxyAuthSettings, trust: ProxyTrust): (req: IncomingMessage) => Who | undefined {
  const userHeader = settings.userHeader.toLowerCase();
  const groupsHeader = settings.groupsHeader?.toLowerCase();
  return (req) => {
    const peer = req.socket.remoteAddress;
    if (peer === undefined || !trust(peer, 0)) return undefined;
    const user = single(req.headers[userHeader]);
    if (!user) return undefined;
    let role = settings.defaultRole;
    const groups = groupsHeader ? (single(req.headers[groupsHeader]) ?? '').split(/[\s,]+/) : [];
    for (const group of groups) {
      const mapped = settings.roles[group];
      if (mapped && roleAtLeast(mapped, role)) role = mapped;
    }
    return { name: `proxy:${user.slice(0, MAX_NAME)}`, role };
  };
}

function single(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const trimmed = text?.trim();
  return trimmed ? trimmed : undefined;
}
