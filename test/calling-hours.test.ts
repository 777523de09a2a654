import { describe, expect, test } from 'vitest';
import { nextCallingTime, withinCallingHours } from '../src/campaigns/calling-hours.js';
import { CallingWindowSchema } from '../src/campaigns/definition.js';

const weekdays = [CallingWindowSchema.parse({ days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '18:00' })];

describe('calling hours', () => {
  test('read in the time zone given: 08:59 in Berlin is outside, 09:00 inside', () => {
    expect(withinCallingHours(Date.parse('2026-03-02T07:59:00Z'), 'Europe/Berlin', weekdays)).toBe(false);
    expect(withinCallingHours(Date.parse('2026-03-02T08:00:00Z'), 'Europe/Berlin', weekdays)).toBe(true);
    expect(withinCallingHours(Date.parse('2026-03-02T08:00:00Z'), 'America/New_York', weekdays)).toBe(false);
  });

  test('the next opening: later today, or Monday after a Friday evening, across a daylight-saving change', () => {
    expect(new Date(nextCallingTime(Date.parse('2026-03-02T07:59:30Z'), 'Europe/Berlin', weekdays)!).toISOString()).toBe('2026-03-02T08:00:00.000Z');
    // Friday 27 March 2026, 19:00 in Berlin; the clocks go forward on Sunday the 29th.
    expect(new Date(nextCallingTime(Date.parse('2026-03-27T18:00:00Z'), 'Europe/Berlin', weekdays)!).toISOString()).toBe('2026-03-30T07:00:00.000Z');
    expect(nextCallingTime(123, 'UTC', undefined)).toBe(123);
  });
});
