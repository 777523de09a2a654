/**
 * How strong the shared secrets Hotline compares or signs with must be.
 *
 * At least 16 characters. Online, each address may make
 * RATE_LIMIT_AUTH_FAILURES_PER_MINUTE (30) wrong guesses a minute: 100,000
 * addresses make about 4·10⁹ a day, against which 16 random characters (64
 * bits even as hex, 95 as letters and digits) hold for millions of years, and
 * a token like `a` or `admin` falls in the first minute. REPORT_WEBHOOK_SECRET
 * can be guessed offline by anyone who sees one signed report (a log, a proxy):
 * an 8-character key falls to a graphics card in hours, 16 random ones do not.
 * The same rule for all of them keeps it one rule to remember.
 *
 * Length is what can be checked without knowing how the secret was made; a
 * pattern repeated (`aaaaaaaaaaaaaaaa`, `abcabcabcabcabca`) is caught as well,
 * which a random secret never is. `openssl rand -hex 32` makes a good one.
 */
export const MIN_SECRET_LENGTH = 16;

/** The secrets of Hotline's own edges (not the LLM's or the voice service's keys, which their owners issue). */
export const SHARED_SECRETS = ['ADMIN_TOKEN', 'WS_TOKEN', 'WEBHOOK_SECRET', 'METRICS_TOKEN', 'REPORT_WEBHOOK_SECRET', 'CLUSTER_SECRET'] as const;
export type SharedSecret = (typeof SHARED_SECRETS)[number];

/** A pattern of at most this many characters, repeated, is no secret. */
const SHORTEST_PATTERN = 4;

/** Why the value is too weak to guard anything, without saying what it is; undefined when it is fine. */
export function secretWeakness(value: string): string | undefined {
  const length = [...value].length;
  if (length < MIN_SECRET_LENGTH) return `is ${length} character${length === 1 ? '' : 's'} long`;
  for (let size = 1; size <= SHORTEST_PATTERN; size++) {
    if (value.length % size === 0 && value.slice(0, size).repeat(value.length / size) === value) return `repeats ${size === 1 ? 'one character' : `a pattern of ${size} characters`}`;
  }
  return undefined;
}

/** One line per weak secret that is set, naming the variable (never its value) and how to fix it. */
export function weakSecrets(values: Readonly<Partial<Record<SharedSecret, string | undefined>>>): string[] {
  return SHARED_SECRETS.flatMap((name) => {
    const value = values[name];
    const weakness = value === undefined || value === '' ? undefined : secretWeakness(value);
    return weakness === undefined ? [] : [`${name} ${weakness}: use at least ${MIN_SECRET_LENGTH} random characters (e.g. \`openssl rand -hex 32\`)`];
  });
}
