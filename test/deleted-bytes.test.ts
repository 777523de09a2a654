/**
 * What an erasure or a retention sweep deletes is gone from the database's files, not only from its
 * tables: the raw bytes of SQLite's file, its write-ahead log and shared memory, and PostgreSQL's
 * pages of every table, TOAST table and index, are searched for the person's words and digits.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { sweepRetention } from '../src/privacy/retention.js';
import { CallRepository } from '../src/store/call-repository.js';
import { DeliveryRepository } from '../src/store/delivery-repository.js';
import { ReportRepository } from '../src/store/report-repository.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { callSummary, stored } from './helpers/reports.js';
import { freshStore, freshStoreLocation, POSTGRES_SERVER, storeKinds, type StoreKind, type TestStoreLocation } from './helpers/stores.js';

const ADMIN = 'deleted-bytes-admin-token-0123456789';
const DAY = 86_400_000;
/** The person: their number and their words, each distinctive enough to be found in raw bytes. */
const ANNA = { number: '4915112345678', digits: '15112345678', words: 'My secret word is pineapple and my door code is 7364 1928' };
const ANNA_TRACES = ['pineapple', '7364 1928', ANNA.digits];
/** Someone else, who stays: the search must find what is there. */
const BERT = { number: '4917099999999', words: 'Hello there, this is banana speaking' };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The raw bytes the database keeps, as one buffer per file or relation. SQLite: the file, its
 * write-ahead log and its shared memory. PostgreSQL: every page of every table, TOAST table and index
 * of the database, read with pageinspect as the server has them now (a vacuum's pages need not be on
 * disk yet); without pageinspect, the relations' files after a checkpoint.
 */
async function rawBytes(location: TestStoreLocation): Promise<{ where: string; bytes: Buffer }[]> {
  if (location.kind === 'sqlite') {
    const file = location.location.databaseFile;
    return Promise.all(
      [file, `${file}-wal`, `${file}-shm`, `${file}-journal`].filter((name) => existsSync(name)).map(async (name) => ({ where: path.basename(name), bytes: await readFile(name) })),
    );
  }
  const client = new pg.Client({ connectionString: `${POSTGRES_SERVER}/${location.database}` });
  await client.connect();
  try {
    const relations = `
      SELECT c.oid::regclass::text AS name, c.oid AS oid, pg_relation_filepath(c.oid) AS file
      FROM pg_class c
      WHERE c.relkind IN ('r', 't', 'i') AND pg_relation_size(c.oid) > 0
        AND (c.relnamespace = current_schema()::regnamespace
          OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relnamespace = current_schema()::regnamespace)
          OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT reltoastrelid FROM pg_class WHERE relnamespace = current_schema()::regnamespace)))`;
    const { rows } = await client.query<{ name: string; oid: number; file: string }>(relations);
    expect(rows.map((row) => row.name)).toEqual(expect.arrayContaining(['calls']));
    const inspect = await client.query('CREATE EXTENSION IF NOT EXISTS pageinspect').then(
      () => true,
      () => false,
    );
    if (inspect) {
      const pages = 'SELECT string_agg(get_raw_page($1::regclass::text, b::int), \'\'::bytea ORDER BY b) AS bytes FROM generate_series(0, pg_relation_size($1::regclass) / 8192 - 1) b';
      return await Promise.all(rows.map(async (row) => ({ where: row.name, bytes: (await client.query<{ bytes: Buffer }>(pages, [row.oid])).rows[0]!.bytes })));
    }
    await client.query('CHECKPOINT');
    const dataDir = (await client.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir")).rows[0]!.dir;
    return await Promise.all(rows.map(async (row) => ({ where: row.name, bytes: await readFile(path.join(dataDir, row.file)) })));
  } finally {
    await client.end();
  }
}

/** Where in the database's raw bytes each of `traces` is, by trace. */
async function foundIn(location: TestStoreLocation, traces: readonly string[]): Promise<Record<string, string[]>> {
  const files = await rawBytes(location);
  return Object.fromEntries(traces.map((trace) => [trace, files.filter(({ bytes }) => bytes.includes(trace)).map(({ where }) => where)]));
}

async function call(env: TestHotline, from: string, ...utterances: string[]): Promise<void> {
  const service = await FakeVoiceService.connect(env.hotline.wsUrl);
  service.start({ from_phone_number: from });
  await service.next();
  for (const words of utterances) {
    service.say(words);
    await service.nextOfType('speak');
  }
  service.end('caller_hangup');
  await service.close();
}

describe.each(await storeKinds())('what is deleted leaves the database files (%s)', (kind: StoreKind) => {
  test('after an erasure, no byte of the person’s words or number is left in the files; what is someone else’s still is', async () => {
    const location = await freshStoreLocation(kind);
    cleanups.push(() => location.remove());
    const env = await startTestHotline(() => ({ content: 'Noted, thank you.' }), { ADMIN_TOKEN: ADMIN, ...location.env });
    cleanups.push(() => env.close());
    // Each utterance rewrites the call's row: older copies of it are what a delete leaves behind.
    await call(env, ANNA.number, ANNA.words, 'I repeat: pineapple, 7364 1928.', 'That is all.');
    await call(env, BERT.number, BERT.words);
    await expect.poll(() => env.hotline.registry.size).toBe(0);
    await env.hotline.registry.whenRecorded();
    await env.hotline.reports.whenIdle();
    expect((await foundIn(location, ['pineapple', 'banana'])).pineapple).not.toEqual([]);

    const response = await fetch(`${env.hotline.url}/api/people/erase`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ number: `+${ANNA.number}` }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ counts: { calls: 1 }, filesWiped: true });

    const found = await foundIn(location, [...ANNA_TRACES, 'banana']);
    for (const trace of ANNA_TRACES) expect(found[trace], `"${trace}" is still in`).toEqual([]);
    expect(found.banana).not.toEqual([]);
    // Nor in the transcripts, nor in the store journal beside them.
    for (const entry of await readdir(env.transcriptsDir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const bytes = await readFile(path.join(entry.parentPath, entry.name));
      for (const trace of ANNA_TRACES) expect(bytes.includes(trace), `"${trace}" is still in ${entry.name}`).toBe(false);
    }
  });

  test('after a retention sweep, no byte of a swept call, report or delivery is left in the files', async () => {
    const opened = await freshStore(kind);
    cleanups.push(() => opened.close());
    const { db } = opened;
    const t0 = Date.now();
    const ago = (days: number) => new Date(t0 - days * DAY).toISOString();
    const calls = new CallRepository(db);
    const conversation = (words: string) => [{ role: 'user' as const, text: words }];
    // The old call, written as a call is: a snapshot per turn, then its end.
    for (let revision = 1; revision <= 3; revision++) {
      await calls.save(
        stored(callSummary({ sessionId: 'old', from: ANNA.number, startedAt: ago(40.01), endedAt: ago(40), conversation: conversation(`${ANNA.words} (${revision})`) }), revision),
      );
    }
    await calls.save(stored(callSummary({ sessionId: 'new', from: BERT.number, startedAt: ago(1.01), endedAt: ago(1), conversation: conversation(BERT.words) })));
    await new ReportRepository(db).save({ callId: 'old', sessionId: 'old', createdAt: ago(40), summary: ANNA.words, fields: null, fieldsStatus: 'ok', fieldsError: null, body: JSON.stringify({ summary: ANNA.words }) });
    await new DeliveryRepository(db).add({ id: 'd-old', callId: 'old', sessionId: 'old', url: 'https://example.com/hook', body: JSON.stringify({ summary: ANNA.words, from: ANNA.number }), createdAt: ago(40), nextAttemptAt: t0 });
    expect((await foundIn(opened.location, ['pineapple'])).pineapple).not.toEqual([]);

    const counts = await sweepRetention({ db, dialect: opened.dialect, transcriptsDir: path.join(path.sep, 'nonexistent'), settings: { calls: 30, reports: 30, deliveries: 30 }, now: () => t0, log: pino({ level: 'warn' }) });
    expect(counts).toMatchObject({ calls: 1, reports: 1, deliveries: 1 });

    const found = await foundIn(opened.location, [...ANNA_TRACES, 'banana']);
    for (const trace of ANNA_TRACES) expect(found[trace], `"${trace}" is still in`).toEqual([]);
    expect(found.banana).not.toEqual([]);
  });
});
