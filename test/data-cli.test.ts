import { mkdir, mkdtemp, readFile, readdir, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { runDataCli } from '../src/cli/data.js';
import { CallRepository } from '../src/store/call-repository.js';
import { pino } from 'pino';
import { openStore } from '../src/store/store.js';
import { callProgress, callSummary, stored } from './helpers/reports.js';
import { textSink } from './helpers/text-sink.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const ANNA = '4915112345678';
const BERT = '4917099999999';

let location: TestStoreLocation | undefined;
let dir: string | undefined;
afterEach(async () => {
  await location?.remove();
  if (dir) await rm(dir, { recursive: true, force: true });
  location = dir = undefined;
});

async function run(args: string[], vars: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = textSink();
  let stderr = '';
  const env = { ...location!.env, TRANSCRIPTS_DIR: dir!, DEFAULT_COUNTRY_CODE: '49', NODE_ENV: 'test', ...vars };
  const code = await runDataCli(args, env, { stdout: out.stream, stderr: { write: (text: string) => ((stderr += text), true) } });
  return { code, stdout: out.text(), stderr };
}

/** Two of Anna's calls (one still in progress), one of Bert's, each with its transcript file. */
async function seed(): Promise<void> {
  const store = await openStore(location!.location, pino({ level: 'silent' }));
  const calls = new CallRepository(store.db);
  const file = (id: string) => path.join(dir!, `${id}.jsonl`);
  for (const [id, from, words] of [
    ['anna-1', ANNA, 'I am Anna'],
    ['bert-1', BERT, 'I am Bert'],
  ] as const) {
    await calls.save(stored(callSummary({ sessionId: id, from, transcriptFile: file(id) })));
    await writeFile(file(id), `${JSON.stringify({ role: 'user', text: words })}\n`);
  }
  await calls.save(callProgress(1, { sessionId: 'anna-2', from: ANNA, transcriptFile: file('anna-2') }));
  // Records the database refused, kept in a replica's journal: one of each caller's.
  const journal = path.join(dir!, 'store-journal', 'replica-1');
  await mkdir(journal, { recursive: true });
  const refused = (sessionId: string, from: string) => JSON.stringify({ call: callSummary({ sessionId, from }), final: true, reason: 'a bug', at: '2026-11-22T03:05:02.000Z' });
  await writeFile(path.join(journal, 'rejected.jsonl'), `${refused('anna-0', ANNA)}\n${refused('bert-0', BERT)}\n`);
  await writeFile(file('anna-2'), `${JSON.stringify({ role: 'user', text: 'Anna again' })}\n`);
  await store.close();
}

describe.each(await storeKinds())('npm run data (%s)', (kind) => {
  test('export, a dry run and an erasure by the number in its national form; the call in progress stays, Bert is untouched', async () => {
    location = await freshStoreLocation(kind);
    dir = await mkdtemp(path.join(tmpdir(), 'hotline-data-'));
    await seed();

    const out = path.join(dir, 'export', 'anna.json');
    await mkdir(path.dirname(out));
    const exported = await run(['export', '--number', '0151 1234 5678', '--out', out]);
    expect(exported).toMatchObject({ code: 0, stdout: '' });
    expect(exported.stderr).toContain('exported 1 call(s), 2 transcript(s)');
    expect(exported.stderr).toContain('1 record(s) the database refused');
    const document = JSON.parse(await readFile(out, 'utf8')) as {
      number: string;
      calls: { call: { session_id: string }; transcript: { text: string }[] }[];
      refusedRecords: { call: { sessionId: string } }[];
    };
    expect(document.number).toBe(ANNA);
    expect(document.refusedRecords.map((r) => r.call.sessionId)).toEqual(['anna-0']);
    expect(document.calls.map((c) => c.call.session_id).sort()).toEqual(['anna-1', 'anna-2']);
    expect(JSON.stringify(document)).not.toContain('Bert');

    const dry = await run(['erase', '--number', '+49 151 12345678', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^would erase 1 call\(s\), 2 transcript\(s\).*; 1 call\(s\) in progress; 1 record\(s\) the database refused \(store journal\) \(nothing was changed\)\n$/);
    expect((await readdir(dir)).sort()).toEqual(['anna-1.jsonl', 'anna-2.jsonl', 'bert-1.jsonl', 'export', 'store-journal']);

    const erased = await run(['erase', '--number', '0049-151-12345678', '--stop-calling']);
    expect(erased.code).toBe(0);
    expect(erased.stdout).toMatch(/^erased 1 call\(s\).*\(erasure [0-9a-f-]{36}\); 1 call\(s\) still in progress were left: erase again once they have ended; the number is on the stop list now\n$/);
    expect((await readdir(dir)).sort()).toEqual(['anna-2.jsonl', 'bert-1.jsonl', 'export', 'store-journal']);
    const kept = await readFile(path.join(dir, 'store-journal', 'replica-1', 'rejected.jsonl'), 'utf8');
    expect(kept).toContain('bert-0');
    expect(kept).not.toContain(ANNA);

    const after = await run(['export', '--number', ANNA]);
    const again = JSON.parse(after.stdout) as { calls: { call: { session_id: string } }[]; stopList: unknown[] };
    expect(again.calls.map((c) => c.call.session_id)).toEqual(['anna-2']);
    expect(again.stopList).toHaveLength(1);
    expect(JSON.parse((await run(['export', '--number', BERT])).stdout)).toMatchObject({ calls: [{ call: { session_id: 'bert-1' } }] });
  });

  test('a transcript or the journal that cannot be read fails the request with what it was, and changes nothing', async () => {
    location = await freshStoreLocation(kind);
    dir = await mkdtemp(path.join(tmpdir(), 'hotline-data-'));
    await seed();
    const rejected = path.join(dir, 'store-journal', 'replica-1', 'rejected.jsonl');
    const transcript = path.join(dir, 'anna-1.jsonl');
    // Files that cannot be read: here turned into folders (the tests run as root, whom no permission stops).
    for (const [file, message, requests] of [
      [
        rejected,
        /^data (export|erase): the store journal .*replica-1 could not be read \(EISDIR\): the request was not answered, and nothing was changed; fix it and ask again\n$/,
        [['export', '--number', ANNA], ['erase', '--number', ANNA, '--dry-run'], ['erase', '--number', ANNA]],
      ],
      [transcript, /^data (export|erase): a call's transcript .*anna-1\.jsonl is not a file: .*nothing was changed/, [['export', '--number', ANNA], ['erase', '--number', ANNA]]],
    ] as const) {
      const text = await readFile(file, 'utf8');
      await rm(file);
      await mkdir(file);
      for (const args of requests) {
        const failed = await run([...args]);
        expect(failed, args.join(' ')).toMatchObject({ code: 1, stdout: '' });
        expect(failed.stderr).toMatch(message);
      }
      await rm(file, { recursive: true });
      await writeFile(file, text);
    }
    const exported = await run(['export', '--number', ANNA]);
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ counts: { calls: 1, callsInProgress: 1, refusedRecords: 1 } });
  }, 30_000); // Six runs of the command, each opening the store: seconds each on a loaded machine.

  test('usage mistakes and a number that is none: exit 2 with one line', async () => {
    location = await freshStoreLocation(kind);
    dir = await mkdtemp(path.join(tmpdir(), 'hotline-data-'));
    expect(await run(['erase'])).toMatchObject({ code: 2, stderr: expect.stringContaining('erase needs --number') });
    expect(await run(['export', '--number', '1', '--dry-run'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--dry-run and --stop-calling go with erase') });
    const bad = await run(['export', '--number', 'Anna']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^data export: .*letters/);
    // The README's example, without DEFAULT_COUNTRY_CODE: the error names it.
    const national = await run(['erase', '--number', '0151 1234567'], { DEFAULT_COUNTRY_CODE: undefined });
    expect(national.code).toBe(2);
    expect(national.stderr).toMatch(/^data erase: .*"0151 1234567".*national form.*DEFAULT_COUNTRY_CODE is not set: set DEFAULT_COUNTRY_CODE \(e\.g\. 49 for Germany\), or use the international format, e\.g\. \+49 151 1234567\n$/);
  });
});
