/**
 * How long each kind of personal data is kept, in days (GDPR art. 5(1)(e): no longer than needed).
 * A kind without a limit is kept forever, which is also what a Hotline with no RETENTION_* variable
 * does: deleting records is never switched on by an upgrade, only by the operator.
 */
import { ConfigError } from '../errors.js';

/** The kinds of record the sweep knows, in the order it sweeps them. */
export const RETENTION_KINDS = ['reports', 'calls', 'deliveries', 'campaigns', 'transcripts', 'audit'] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

/** Days per kind; undefined keeps that kind forever. Fractions are allowed (12 hours is 0.5). */
export type RetentionSettings = { [Kind in RetentionKind]?: number };

/**
 * Past this a limit is no limit, and its cutoff would leave the years JavaScript dates and ISO
 * text compare correctly in (a negative year's ISO text sorts before every real one).
 */
export const MAX_RETENTION_DAYS = 36_525;

export const DAY_MS = 86_400_000;

/** The variable of each kind's own limit. */
export const RETENTION_VARIABLES: { readonly [Kind in RetentionKind]: string } = {
  transcripts: 'RETENTION_TRANSCRIPTS_DAYS',
  reports: 'RETENTION_REPORTS_DAYS',
  calls: 'RETENTION_CALLS_DAYS',
  deliveries: 'RETENTION_DELIVERIES_DAYS',
  campaigns: 'RETENTION_CAMPAIGNS_DAYS',
  audit: 'RETENTION_AUDIT_DAYS',
};

/** The default of every kind without a variable of its own. */
export const RETENTION_DEFAULT_VARIABLE = 'RETENTION_DAYS';

/** `forever` in a variable: keep this kind, whatever RETENTION_DAYS says. */
const FOREVER = 'forever';

/** A plain decimal: "30", "0.5", ".5". No signs, exponents, units or Infinity: what people write in a .env. */
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * The limits the environment sets:
 *
 * - `RETENTION_DAYS` is every kind's default; unset or empty, there is none (kept forever).
 * - `RETENTION_<KIND>_DAYS` overrides it for one kind. Unset or empty inherits the default (an
 *   empty line in a .env file is "not set", as for Hotline's other variables), and `forever` keeps
 *   that kind however long RETENTION_DAYS is — e.g. RETENTION_DAYS=30 with RETENTION_AUDIT_DAYS=forever.
 * - A limit is a positive number of days up to MAX_RETENTION_DAYS, fractions allowed. `0` is refused
 *   rather than read as "forever" or "at once": either reading deletes or keeps what the other
 *   promised, and the operator who wrote it should say which (`forever`, or a small fraction).
 *
 * Throws a ConfigError naming the variable and what it takes.
 */
export function retentionSettingsFromEnv(env: Readonly<Record<string, string | undefined>>): RetentionSettings {
  const fallback = parseDays(RETENTION_DEFAULT_VARIABLE, env[RETENTION_DEFAULT_VARIABLE]);
  const settings: RetentionSettings = {};
  for (const kind of RETENTION_KINDS) {
    const own = parseDays(RETENTION_VARIABLES[kind], env[RETENTION_VARIABLES[kind]]);
    const days = own === 'inherit' ? fallback : own;
    if (typeof days === 'number') settings[kind] = days;
  }
  return settings;
}

function parseDays(name: string, raw: string | undefined): number | 'forever' | 'inherit' {
  const value = raw?.trim() ?? '';
  if (value === '') return 'inherit';
  if (value.toLowerCase() === FOREVER) return 'forever';
  const days = DECIMAL.test(value) ? Number(value) : Number.NaN;
  if (!validDays(days)) {
    throw new ConfigError(
      `${name} must be a number of days greater than 0 and at most ${MAX_RETENTION_DAYS} (fractions allowed, e.g. 30 or 0.5), ` +
        `or "${FOREVER}" to keep that data; empty or unset ${name === RETENTION_DEFAULT_VARIABLE ? 'keeps everything' : `uses ${RETENTION_DEFAULT_VARIABLE}`} (got "${value}")`,
    );
  }
  return days;
}

function validDays(days: number): boolean {
  return Number.isFinite(days) && days > 0 && days <= MAX_RETENTION_DAYS;
}

/** Settings given in code (not read from the environment) are held to the same rule; the message names the kind. */
export function checkRetentionSettings(settings: RetentionSettings): void {
  for (const kind of RETENTION_KINDS) {
    const days = settings[kind];
    if (days !== undefined && !validDays(days)) {
      throw new ConfigError(`retention of ${kind} must be a number of days greater than 0 and at most ${MAX_RETENTION_DAYS}, or unset to keep them (got ${days})`);
    }
  }
}

/** Whether any kind has a limit: without one, there is nothing to sweep. */
export function hasRetentionLimit(settings: RetentionSettings): boolean {
  return RETENTION_KINDS.some((kind) => settings[kind] !== undefined);
}
