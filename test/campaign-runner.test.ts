/**
 * The scheduler against the real database, with a dialer that records instead
 * of calling (the campaigns tests drive the whole path through the emulator):
 * what survives a restart, and that a tick asks the database for the next
 * contact and counts, never for the whole list.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { CampaignRunner } from '../src/campaigns/campaign-runner.js';
import { ShiftedClock } from '../src/campaigns/clock.js';
import { CampaignSettingsSchema, openCampaignStore, type Contact } from '../src/campaigns/definition.js';
import type { Dialer, DialRequest } from '../src/campaigns/dialer.js';
import { PendingCalls } from '../src/outbound/pending-calls.js';
import { Database } from '../src/store/database.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function recordingDialer(): Dialer & { dialed: DialRequest[] } {
  const calls = new PendingCalls(60_000);
  const dialed: DialRequest[] = [];
  return {
    dialed,
    missing: () => [],
    refusal: () => undefined,
    dial(request) {
      dialed.push(request);
      return Promise.resolve(calls.add(request.to, request.variables, request.tags));
    },
    forget: (call) => calls.remove(call),
  };
}

function setUp(clock: ShiftedClock) {
  const db = Database.open(':memory:', logger);
  cleanups.push(() => db.close());
  const repository = openCampaignStore(db);
  const runner = (dialer: Dialer) => {
    const r = new CampaignRunner({ repository, dialer, clock, logger });
    cleanups.push(() => r.close());
    return r;
  };
  return { db, repository, runner };
}

const contacts = (n: number): Contact[] => Array.from({ length: n }, (_, i) => ({ number: `4915100000${String(i).padStart(3, '0')}`, variables: {} }));

describe('CampaignRunner', () => {
  test('the pace holds across a restart: the next call waits for pace_ms after the last one the old process started', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { repository, runner } = setUp(clock);
    const settings = CampaignSettingsSchema.parse({ name: 'paced', pace_ms: 60_000, concurrency: 5 });
    const first = recordingDialer();
    const before = runner(first);
    const id = await before.create(settings, contacts(3));
    expect(first.dialed).toHaveLength(1);
    before.close();

    clock.advance(10_000);
    const second = recordingDialer();
    const after = runner(second);
    after.start();
    // The old process's call counts as unanswered; the next call is 50 s away, not now.
    expect(second.dialed).toHaveLength(0);
    expect(repository.contact(id, 0)).toMatchObject({ status: 'done', outcome: 'no_answer' });
    clock.advance(50_000);
    after.tick();
    expect(second.dialed.map((d) => d.to)).toEqual(['4915100000001']);
  });

  test('a number that joins the global stop list while waiting for a retry is refused at the next look, never called', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { repository, runner } = setUp(clock);
    const dialer = recordingDialer();
    const r = runner(dialer);
    const settings = CampaignSettingsSchema.parse({ name: 'retry', retries: { busy: { times: 1, after_minutes: 10 } } });
    const id = await r.create(settings, contacts(1));
    const [request] = dialer.dialed;
    r.callNotConnected({ toPhoneNumber: request!.to, variables: {}, tags: request!.tags, requestedAt: clock.now() }, 'busy');
    expect(repository.contact(id, 0)).toMatchObject({ status: 'pending', outcome: 'busy', attempts: 1 });

    repository.addToStopList(request!.to, 'asked on another campaign', new Date(clock.now()));
    clock.advance(10 * 60_000);
    r.tick();
    expect(dialer.dialed).toHaveLength(1);
    expect(repository.contact(id, 0)).toMatchObject({ status: 'done', outcome: 'refused' });
  });

  test("the repository's queries and changes on contacts walk indexes: no scan of the table, no sort for ORDER BY", () => {
    const db = Database.open(':memory:', logger);
    cleanups.push(() => db.close());
    // Every statement the repository prepares, recorded as it is prepared.
    const sources: string[] = [];
    const prepare = db.sql.prepare.bind(db.sql);
    db.sql.prepare = ((source: string) => (sources.push(source), prepare(source))) as typeof db.sql.prepare;
    openCampaignStore(db).updateContact('x', 0, { status: 'done' }, new Date());
    const reads = sources.filter((source) => /^\s*(SELECT|UPDATE|DELETE)[\s\S]*campaign_contacts/.test(source));
    expect(reads.length).toBeGreaterThanOrEqual(12);
    for (const source of reads) {
      // Bind every parameter to null: the plan depends on the query's shape, not on values.
      const named = Object.fromEntries([...source.matchAll(/@(\w+)/g)].map(([, name]) => [name, null]));
      const positional = [...source.matchAll(/\?/g)].map(() => null);
      const statement = db.sql.prepare(`EXPLAIN QUERY PLAN ${source}`);
      const rows = (Object.keys(named).length > 0 ? statement.all(named) : statement.all(...positional)) as { detail: string }[];
      const detail = rows.map((row) => row.detail).join('\n');
      expect(detail, source).not.toMatch(/SCAN campaign_contacts|TEMP B-TREE FOR (LAST TERM OF )?ORDER BY/);
    }
  });
});
