import { minutesOf, WEEKDAYS, type CallingWindow, type Weekday } from './definition.js';

interface LocalTime {
  day: Weekday;
  /** Minutes after local midnight. */
  minute: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function localTime(at: number, timeZone: string): LocalTime {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formats.set(timeZone, format);
  }
  const parts = format.formatToParts(at);
  const part = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  const day = part('weekday').toLowerCase().slice(0, 3) as Weekday;
  return { day, minute: Number(part('hour')) * 60 + Number(part('minute')) };
}

/** Whether `at` falls in one of the windows, read in `timeZone`. No windows: always. */
export function withinCallingHours(at: number, timeZone: string, windows: readonly CallingWindow[] | undefined): boolean {
  if (!windows) return true;
  const local = localTime(at, timeZone);
  return windows.some((w) => w.days.includes(local.day) && local.minute >= minutesOf(w.from) && local.minute < minutesOf(w.to));
}

const MINUTE = 60_000;

/**
 * The first moment at or after `at` within the windows; undefined if there
 * is none in the coming eight days (windows without days cannot happen: the
 * schema refuses them). Computed from local wall time, then checked, so a
 * daylight-saving shift moves the answer by its hour at most and never
 * yields a moment outside the window.
 */
export function nextCallingTime(at: number, timeZone: string, windows: readonly CallingWindow[] | undefined): number | undefined {
  if (withinCallingHours(at, timeZone, windows) || !windows) return at;
  const local = localTime(at, timeZone);
  const startOfMinute = at - (at % MINUTE);
  const todayIndex = WEEKDAYS.indexOf(local.day);
  let best: number | undefined;
  for (let dayOffset = 0; dayOffset <= 7; dayOffset++) {
    const day = WEEKDAYS[(todayIndex + dayOffset) % 7]!;
    for (const w of windows) {
      if (!w.days.includes(day)) continue;
      const minutesAhead = dayOffset * 1440 + minutesOf(w.from) - local.minute;
      if (minutesAhead <= 0) continue;
      const candidate = settle(startOfMinute + minutesAhead * MINUTE, timeZone, windows);
      if (candidate !== undefined && (best === undefined || candidate < best)) best = candidate;
    }
    if (best !== undefined) return best;
  }
  return best;
}

/**
 * A daylight-saving change between now and the candidate puts the wall-time
 * sum an hour off either way: step forward until inside, then back to the
 * window's first minute.
 */
function settle(candidate: number, timeZone: string, windows: readonly CallingWindow[]): number | undefined {
  let at: number | undefined;
  for (let step = 0; step <= 8 && at === undefined; step++) {
    const next = candidate + step * 15 * MINUTE;
    if (withinCallingHours(next, timeZone, windows)) at = next;
  }
  if (at === undefined) return undefined;
  for (let back = 0; back < 120 && withinCallingHours(at - MINUTE, timeZone, windows); back++) at -= MINUTE;
  return at;
}
