/**
 * TRUST_PROXY and PROXY_AUTH_*: whose X-Forwarded-* headers (the client's address, scheme and host)
 * and identity headers (who uses the dashboard) Hotline believes. Only peers named by address or
 * subnet are believed: `true` or a hop count would believe whoever connects, and a replica is
 * reachable without its proxy (its pod IP, its INTERNAL_URL, another container on its network).
 */
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { isStaffRole, type StaffRole } from './staff/roles.js';

/**
 * Which proxies' X-Forwarded-For entries to believe: none (false), or the proxies' addresses and
 * subnets (also loopback, linklocal, uniquelocal), as proxy-addr reads them.
 */
export type TrustProxy = false | string[];

/** Who uses the dashboard, as an authenticating reverse proxy says (src/dashboard/proxy-identity.ts). */
export interface ProxyAuthSettings {
  /** The header naming the person, e.g. X-Forwarded-Email. */
  userHeader: string;
  /** The header listing their groups (comma or space separated), e.g. X-Forwarded-Groups. */
  groupsHeader?: string | undefined;
  /** Each group's role; a person gets the highest of their groups'. */
  roles: Readonly<Record<string, StaffRole>>;
  /** The role of someone none of whose groups is mapped. */
  defaultRole: StaffRole;
}

const EXAMPLE = 'e.g. TRUST_PROXY=10.0.0.5 or 10.0.0.0/24,loopback';

/**
 * Documentation addresses (RFC 5737, RFC 3849): no proxy has one, so a setting that trusts them
 * trusts every address, whatever its spelling (0.0.0.0/0, ::/0, ::ffff:0:0/96, 128.0.0.0/1, …).
 */
const NOBODYS = ['192.0.2.1', '198.51.100.1', '203.0.113.1', '2001:db8::1'];

/** What is wrong with the list as a sentence, or undefined when it names proxies. */
function listProblem(entries: string[]): string | undefined {
  try {
    proxyAddr.compile(entries);
  } catch {
    return `TRUST_PROXY must be false or the proxies' addresses/subnets, ${EXAMPLE}`;
  }
  const everyone = entries.find((entry) => NOBODYS.some((address) => proxyAddr.compile([entry])(address, 0)));
  if (everyone !== undefined) {
    return `TRUST_PROXY: ${everyone} takes in every address, so anyone could write X-Forwarded-For and the identity headers: name the proxies' own addresses or subnet, ${EXAMPLE}`;
  }
  return undefined;
}

export const trustProxySchema = z
  .string()
  .default('false')
  .transform((raw, ctx): TrustProxy => {
    const value = raw.trim().toLowerCase();
    if (value === 'false' || value === '0' || value === 'no' || value === '') return false;
    if (value === 'true' || value === 'yes' || /^\d+$/.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `TRUST_PROXY=${raw.trim()} would believe X-Forwarded-For and the identity headers from whoever connects, a client reaching a replica directly too: name the proxies' addresses or subnet instead, ${EXAMPLE}`,
      });
      return z.NEVER;
    }
    const entries = raw.split(',').map((p) => p.trim()).filter(Boolean);
    const problem = listProblem(entries);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return entries;
  });

/** PROXY_AUTH_*: the header naming the person, their groups' header and "admins=admin, support=operator" → each group's role. */
export function proxyAuthOf(
  userHeader: string | undefined,
  groupsHeader: string | undefined,
  roles: string | undefined,
  defaultRole: StaffRole,
  trust: TrustProxy,
): ProxyAuthSettings | undefined {
  if (!userHeader) {
    if (groupsHeader || roles) throw new ConfigError('PROXY_AUTH_GROUPS_HEADER and PROXY_AUTH_ROLES need PROXY_AUTH_USER_HEADER, the header naming the person');
    return undefined;
  }
  // Without a trusted proxy the header would be believed from no one: a setting that does nothing is a mistake.
  if (trust === false) throw new ConfigError("PROXY_AUTH_USER_HEADER is set without TRUST_PROXY: name the proxy's addresses, from which alone the header is believed");
  const map: Record<string, StaffRole> = {};
  for (const entry of (roles ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const [group, role] = entry.split('=').map((part) => part.trim());
    if (!group || !isStaffRole(role)) throw new ConfigError(`PROXY_AUTH_ROLES: "${entry}" is not group=role with a role of viewer, operator or admin`);
    map[group] = role;
  }
  return { userHeader, groupsHeader, roles: map, defaultRole };
}
