/**
 * Variables every call has, without anyone passing them: prompt files may
 * use these without a default.
 */
export const BUILTIN_NAMES: readonly string[] = Object.freeze([
  'caller_number',
  'called_number',
  'direction',
  'date',
  'time',
  'weekday',
  // The call's language (`de`), when the prompts have languages.
  'language',
]);

const BUILTIN_FOLDED = new Set(BUILTIN_NAMES.map((n) => n.toLowerCase()));

/** Case-insensitive, like variable lookup in templates. */
export function isBuiltinName(name: string): boolean {
  return BUILTIN_FOLDED.has(name.toLowerCase());
}

export interface SessionInfo {
  from?: string | undefined;
  to?: string | undefined;
  direction?: string | undefined;
  /** The call's language, when the prompts have languages. */
  language?: string | undefined;
}

/**
 * `date` ("Sunday, 22 November 2026"), `time` ("14:05") and `weekday` are
 * English whatever the prompt language: the model reads them, not the caller.
 * They are in `timeZone`, else the TZ environment variable, else the system
 * zone. Numbers the service did not send are left out, so a template's
 * default (or its missing-value warning) applies.
 */
export function builtinVariables(session: SessionInfo, now: Date = new Date(), timeZone?: string): Record<string, string> {
  const parts = Object.fromEntries(formatterFor(timeZone ?? envTimeZone()).formatToParts(now).map((p) => [p.type, p.value]));
  const vars: Record<string, string> = {
    // Anything but outbound is handled as an inbound call (see Call), so the prompt says the same.
    direction: session.direction?.toLowerCase() === 'outbound' ? 'outbound' : 'inbound',
    date: `${parts.weekday}, ${parts.day} ${parts.month} ${parts.year}`,
    time: `${parts.hour}:${parts.minute}`,
    weekday: parts.weekday ?? '',
  };
  if (session.from) vars.caller_number = session.from;
  if (session.to) vars.called_number = session.to;
  if (session.language) vars.language = session.language;
  return vars;
}

function envTimeZone(): string | undefined {
  const tz = process.env.TZ?.trim();
  return tz ? tz : undefined;
}

// Building a DateTimeFormat costs far more than using one; zones are few.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? '';
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = createFormatter(timeZone);
    formatters.set(key, formatter);
  }
  return formatter;
}

function createFormatter(timeZone: string | undefined): Intl.DateTimeFormat {
  const options: Intl.DateTimeFormatOptions = {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  };
  try {
    return new Intl.DateTimeFormat('en-GB', { ...options, timeZone });
  } catch {
    // A mistyped TZ must not break calls; UTC is at least a well-defined clock.
    return new Intl.DateTimeFormat('en-GB', { ...options, timeZone: 'UTC' });
  }
}
