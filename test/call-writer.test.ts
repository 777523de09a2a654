/**
 * The call writer on a real store: records written as they come, the latest of a call winning,
 * records a database would not take kept in the journal across a restart, and a record refused
 * for good kept aside, never dropped.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import type { CallSummary } from '../src/call/ports/call-summary.js';
import { CallRepository } from '../src/store/call-repository.js';
import { CallWriter } from '../src/store/call-writer.js';
import { openStore, type Store } from '../src/store/store.js';
import { readRejected } from '../src/store/rejected-records.js';
import { WriteJournal } from '../src/store/write-journal.js';
import { callSummary } from './helpers/reports.js';
import { freshStore, storeKinds } from './helpers/stores.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-writer-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function writer(store: Store, journalDir: string, stored: CallSummary[] = []): CallWriter {
  return new CallWriter({
    rows: new CallRepository(store.db),
    journal: new WriteJournal(journalDir, logger),
    logger,
    stored: (summary) => stored.push(summary),
    backoffMs: 20,
    maxBackoffMs: 100,
  });
}

describe.each(await storeKinds())('on %s', (kind) => {
  test('a call in progress has its row at once; its end replaces it, the report is told once', async () => {
    const store = await freshStore(kind);
    cleanups.push(() => store.close());
    const stored: CallSummary[] = [];
    const records = writer(store, await folder(), stored);
    await records.replay();
    const call = callSummary({ callId: 'w-1', sessionId: 's-1' });
    const { endedAt: _e, durationMs: _d, endReason: _r, ...soFar } = call;
    records.callProgress({ ...soFar, turns: [] });
    records.callProgress({ ...soFar, turns: call.turns });
    expect(await records.settled(10_000)).toBe(true);
    const calls = new CallRepository(store.db);
    expect((await calls.inProgress(10)).map((c) => [c.callId, c.turns.length])).toEqual([['w-1', call.turns.length]]);
    await records.callEnded(call);
    expect(await calls.inProgress(10)).toEqual([]);
    expect((await calls.get('w-1'))?.endReason).toBe(call.endReason);
    expect(stored.map((s) => s.callId)).toEqual(['w-1']);
    await records.close(1_000);
  });
});

test('records a locked database would not take wait in the journal across a restart, and the next start writes them', async () => {
  const dir = await folder();
  const file = path.join(dir, 'hotline.db');
  const first = await openStore({ databaseFile: file }, logger);
  const journalDir = path.join(dir, 'journal');
  const records = writer(first, journalDir);
  await records.replay();
  const lock = new BetterSqlite3(file, { timeout: 0 });
  lock.exec('BEGIN IMMEDIATE');
  try {
    records.callEnded(callSummary({ callId: 'kept-1', sessionId: 'kept-1' }));
    records.callEnded(callSummary({ callId: 'kept-2', sessionId: 'kept-2' }));
    // The database stays locked past the writer's close: what it holds stays in the journal.
    await records.close(200);
    expect(records.backlog.pending).toBe(2);
  } finally {
    lock.exec('COMMIT');
    lock.close();
  }
  await first.close();
  expect((await readdir(journalDir)).filter((name) => name.startsWith('journal-'))).toHaveLength(1);

  const second = await openStore({ databaseFile: file }, logger);
  cleanups.push(() => second.close());
  const next = writer(second, journalDir);
  expect(await next.replay()).toBe(2);
  expect(await next.settled(10_000)).toBe(true);
  const calls = new CallRepository(second.db);
  expect((await calls.listRecent(10)).map((c) => c.callId).sort()).toEqual(['kept-1', 'kept-2']);
  await next.close(1_000);
  // Written, the journal is emptied: a third start has nothing to replay.
  expect((await readdir(journalDir)).filter((name) => name.startsWith('journal-'))).toEqual([]);
});

test('a record the database refuses for good is kept in the journal\'s rejected/ and logged; the other records go on', async () => {
  const dir = await folder();
  const store = await openStore({ databaseFile: path.join(dir, 'hotline.db') }, logger);
  cleanups.push(() => store.close());
  const records = writer(store, dir);
  await records.replay();
  // A direction the schema does not know: a bug's record, which no retry would make right.
  const broken = { ...callSummary({ callId: 'bad-1', sessionId: 'bad-1' }), direction: 'sideways' } as unknown as CallSummary;
  // The first write is under way while the next two wait: those two go in one statement, which the bad one spoils.
  records.callEnded(callSummary({ callId: 'good-0', sessionId: 'good-0' }));
  const refused = records.callEnded(broken);
  records.callEnded(callSummary({ callId: 'good-1', sessionId: 'good-1' }));
  await refused;
  expect(await records.settled(10_000)).toBe(true);
  expect((await new CallRepository(store.db).listRecent(10)).map((c) => c.callId).sort()).toEqual(['good-0', 'good-1']);
  await records.close(1_000);
  const kept = await readRejected(dir);
  expect(kept).toHaveLength(1);
  expect(kept[0]?.record).toMatchObject({ call: { callId: 'bad-1' }, final: true, reason: expect.stringMatching(/CHECK/) });
});
