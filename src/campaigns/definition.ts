import { z } from 'zod';
import { shown } from '../readable-issues.js';
import { CampaignRepository, type StoredCampaign } from '../store/campaign-repository.js';
import type { Store } from '../store/store.js';

/**
 * A campaign as its author writes it (JSON or YAML): who to call, when, how
 * fast and how often to try again. The one source of the campaign's types.
 */

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const CLOCK_TIME = /^([01]\d|2[0-4]):[0-5]\d$/;
// Kept as written, not as minutes: the settings are stored and parsed again with this very schema.
// Messages say what was written and what to write: they reach the person who wrote the file (src/readable-issues.ts).
const clockTime = z
  .string({ error: (issue) => (issue.input === undefined ? 'is missing: write a time HH:MM, e.g. "09:00"' : `must be a time HH:MM, e.g. "09:00", not ${shown(issue.input)}`) })
  .regex(CLOCK_TIME, { error: (issue) => `${shown(issue.input)} is not a time: write HH:MM, e.g. "09:00" (24:00 for the end of the day)` });

/** "09:30" → 570, minutes after local midnight. */
export function minutesOf(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

export const CallingWindowSchema = z
  .strictObject({
    days: z.array(z.enum(WEEKDAYS)).min(1).default([...WEEKDAYS]),
    from: clockTime,
    to: clockTime,
  })
  // Only two times to compare: a time written wrong has its own problem already.
  .refine((w) => !CLOCK_TIME.test(w.from) || !CLOCK_TIME.test(w.to) || minutesOf(w.from) < minutesOf(w.to), {
    error: (issue) => {
      const { from, to } = issue.input as { from: string; to: string };
      return `from ${from} is not before to ${to}: a window ends after it starts (use two windows across midnight)`;
    },
  });
export type CallingWindow = z.infer<typeof CallingWindowSchema>;

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const timeZone = z.string().refine(isTimeZone, { error: (issue) => `${shown(issue.input)} is not a time zone: use an IANA name such as Europe/Berlin` });

const RetryRuleSchema = z.strictObject({
  /** Further attempts after an attempt that ended this way. */
  times: z.number().int().min(0).max(20),
  /** Fractions allowed: tests (and impatient people) retry within seconds. */
  after_minutes: z.number().min(0),
});
export type RetryRule = z.infer<typeof RetryRuleSchema>;

const NO_RETRY = { times: 0, after_minutes: 0 };

export const CampaignSettingsSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  /** Where calling hours are read, unless a contact has its own time_zone. */
  time_zone: timeZone.default('UTC'),
  /** Without it, any time. Several windows: a lunch break, a Saturday morning. */
  calling_hours: z
    .union([CallingWindowSchema, z.array(CallingWindowSchema).min(1)], { error: 'must be a calling window { days, from, to } or a list of them' })
    .optional(),
  concurrency: z.number().int().min(1).max(100).default(1),
  /** The least time between two call starts. */
  pace_ms: z.number().int().min(0).default(0),
  /** A requested call with no session_start within this is no_answer. */
  answer_timeout_seconds: z.number().positive().max(600).default(60),
  retries: z
    .strictObject({
      no_answer: RetryRuleSchema.default(NO_RETRY),
      busy: RetryRuleSchema.default(NO_RETRY),
      voicemail: RetryRuleSchema.default(NO_RETRY),
    })
    .default({ no_answer: NO_RETRY, busy: NO_RETRY, voicemail: NO_RETRY }),
  /** Numbers this campaign never calls, besides the global stop list; normalised when the campaign is created. */
  stop_list: z.array(z.union([z.string(), z.number()]).transform(String)).default([]),
  aiFlowId: z.string().trim().min(1).optional(),
  billingDevice: z.string().trim().min(1).optional(),
});
export type CampaignSettings = z.infer<typeof CampaignSettingsSchema>;

/** What a campaign's API and file accept: the settings, and the contacts as a JSON array or CSV text. */
export const CampaignInputSchema = CampaignSettingsSchema.extend({
  contacts: z.union([z.string().min(1), z.array(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]))).min(1)], {
    error: 'must be the contacts: CSV text (in a file, the path of a CSV file beside it) or a list of rows',
  }),
});
export type CampaignInput = z.input<typeof CampaignInputSchema>;

/** One person to call, as stored: the number normalised, every other column a variable. */
export const ContactSchema = z.object({
  number: z.string(),
  variables: z.record(z.string(), z.string()),
  time_zone: timeZone.optional(),
});
export type Contact = z.infer<typeof ContactSchema>;

export function windowsOf(settings: Pick<CampaignSettings, 'calling_hours'>): CallingWindow[] | undefined {
  const hours = settings.calling_hours;
  if (hours === undefined) return undefined;
  return Array.isArray(hours) ? hours : [hours];
}

/** The store's campaigns, with these settings. */
export type CampaignStore = CampaignRepository<CampaignSettings>;
export type Campaign = StoredCampaign<CampaignSettings>;

/** `replica`: the replica whose runner claims attempts through it (see CampaignRepository). */
export function openCampaignStore(store: Store, replica: string | null = null): CampaignStore {
  return new CampaignRepository(store, CampaignSettingsSchema, replica);
}
