/**
 * The dashboard's reads on a thread of their own: the same answers as in
 * process, from a read-only connection that sees the writer's commits.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, expect, test } from 'vitest';
import { inProcessReads, ThreadReads } from '../src/dashboard/reads.js';
import { CallRepository } from '../src/store/call-repository.js';
import { Database } from '../src/store/database.js';
import { callSummary } from './helpers/reports.js';

const logger = pino({ level: 'silent' });
const PROMPTS = { dir: path.resolve('prompts'), env: {} };
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

test('a thread answers as the queries in process do, and sees calls written after it started', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-reads-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const db = Database.open(path.join(dir, 'hotline.db'), logger);
  cleanups.push(() => db.close());
  const calls = new CallRepository(db);
  calls.save(callSummary({ sessionId: 'first', endedAt: '2026-11-20T10:00:00.000Z' }));
  const thread = new ThreadReads(db.file, PROMPTS, logger);
  cleanups.push(() => thread.close());

  expect(await thread.page({}, 10, 0)).toEqual(await inProcessReads(db, PROMPTS).page({}, 10, 0));
  // The folder check runs there too, and answers as prompts:check does.
  expect((await thread.checkPrompts()).files.map((f) => f.file)).toContain('system.md');
  calls.save(callSummary({ sessionId: 'second', endedAt: '2026-11-21T10:00:00.000Z' }));
  const { calls: listed, total } = await thread.page({}, 10, 0);
  expect(total).toBe(2);
  expect(listed.map((c) => c.sessionId)).toEqual(['second', 'first']);
  expect((await thread.call('second'))?.call.sessionId).toBe('second');
  expect(await thread.call('nope')).toBeUndefined();
  expect(await thread.batch({}, { endedAt: '2026-11-21T10:00:00.000Z', callId: 'second' }, 10)).toHaveLength(1);

  // Stopped, it starts again at the next question.
  await thread.close();
  expect((await thread.page({}, 10, 0)).total).toBe(2);
});

test('a database the thread cannot open rejects each question with why, and nothing crashes', async () => {
  const thread = new ThreadReads(path.join(tmpdir(), 'hotline-no-such-dir', 'none.db'), PROMPTS, logger);
  cleanups.push(() => thread.close());
  await expect(thread.page({}, 10, 0)).rejects.toThrow();
  await expect(thread.fieldNames()).rejects.toThrow();
});
