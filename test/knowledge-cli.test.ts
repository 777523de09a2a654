/**
 * `npm run knowledge`, run as a user runs it: a child process in a folder without .env, an
 * environment of the test's own, a store and a knowledge folder written by the test. The index
 * catches up with the folder first, so a search shows what the documents say now.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { CHILD_TEST_TIMEOUT_MS } from './helpers/child-process.js';
import { runCli, type CliRun } from './helpers/cli.js';
import { DELIVERY, FAQ } from './helpers/knowledge-documents.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';


/** The same FAQ with its second entry's answer missing: line 4 is the entry's. */
const BROKEN_FAQ = `questions:
  - question: How long does a refund take?
    answer: Refunds reach your account within 5 business days.
  - question: Do you ship abroad?
`;

/**
 * More of a shop's documents: with only a handful of passages, a word in most of them (deliver)
 * weighs nothing in BM25, and a question's ranking says little about a real folder's.
 */
const MORE = {
  'opening-hours.md': `# Opening hours

We are open Monday to Friday from 9 a.m. to 6 p.m., and on Saturdays from 10 a.m. to 2 p.m.

## Holidays
On public holidays the shop is closed.
`,
  'returns.md': `# Returns

## Time limit
You can return anything within 30 days with the receipt.

## Refunds
We refund to the card you paid with.
`,
};

const GERMAN = `# Lieferung

## Liefergebiet
Wir liefern in ganz Berlin und nach Potsdam. Eine Lieferung kostet 4,90 Euro.
`;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A knowledge folder of `files` (path → text), and a folder for the transcripts beside it. */
async function workFolder(files: Record<string, string>): Promise<{ knowledge: string; transcripts: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-knowledge-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const knowledge = path.join(dir, 'knowledge');
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(knowledge, file)), { recursive: true });
    await writeFile(path.join(knowledge, file), text);
  }
  return { knowledge, transcripts: path.join(dir, 'transcripts') };
}

async function sqliteStore(): Promise<TestStoreLocation> {
  const store = await freshStoreLocation('sqlite');
  cleanups.push(() => store.remove());
  return store;
}

/** The command with only what the test gives it: never the developer's .env or shell. */
function knowledge(args: readonly string[], store: TestStoreLocation, folder: { knowledge: string; transcripts: string }, vars: Record<string, string> = {}): Promise<CliRun> {
  return runCli('src/cli/knowledge.ts', args, {
    env: { NODE_ENV: 'test', ...store.env, KNOWLEDGE_DIR: folder.knowledge, TRANSCRIPTS_DIR: folder.transcripts, ...vars },
  });
}

describe.each(await storeKinds())('npm run knowledge -- search (%s)', (kind) => {
  test(
    'indexes the folder first and finds the passage with its place; a German question finds the German passage; --json parses',
    async () => {
      const store = await freshStoreLocation(kind);
      cleanups.push(() => store.remove());
      const folder = await workFolder({ 'delivery.md': DELIVERY, 'faq.yaml': FAQ, 'de/lieferung.md': GERMAN, ...MORE });

      const english = await knowledge(['search', 'do you deliver to Potsdam'], store, folder);
      expect(english.code, english.stderr).toBe(0);
      expect(english.stderr.trim()).toBe(`the index caught up with ${folder.knowledge}: 5 files indexed`);
      expect(english.lines[0]).toMatch(/^1\. delivery\.md › Delivery › Delivery areas \(line 3\) {2}score \d+\.\d\d$/);
      expect(english.lines[1]).toBe('   We deliver within Berlin and to Potsdam. Delivery costs 4.90 euros, free from 50 euros.');

      // Unquoted words are one question; nothing changed, so nothing is said on stderr.
      const german = await knowledge(['search', 'Liefern', 'Sie', 'nach', 'Potsdam?'], store, folder);
      expect(german.code, german.stderr).toBe(0);
      expect(german.stderr).toBe('');
      expect(german.lines[0]).toMatch(/^1\. de\/lieferung\.md › Lieferung › Liefergebiet \(line 3\) {2}score \d+\.\d\d$/);

      const json = await knowledge(['search', 'how long does a refund take', '--json', '--limit', '1'], store, folder);
      expect(json.code, json.stderr).toBe(0);
      const passages = JSON.parse(json.stdout) as unknown;
      expect(passages).toEqual([
        {
          source: 'faq.yaml',
          heading: 'How long does a refund take?',
          line: 2,
          page: null,
          score: expect.any(Number) as number,
          text: 'How long does a refund take?\nRefunds reach your account within 5 business days.',
        },
      ]);
    },
    CHILD_TEST_TIMEOUT_MS,
  );
});

test(
  'a question nothing matches says so, and that the model would be told not to guess',
  async () => {
    const folder = await workFolder({ 'delivery.md': DELIVERY });
    const nothing = await knowledge(['search', 'what is the capital of Mongolia'], await sqliteStore(), folder);
    expect(nothing.code, nothing.stderr).toBe(0);
    expect(nothing.lines).toEqual([
      'nothing in the documents matches "what is the capital of Mongolia".',
      "The model would be told so beside the caller's words, and not to guess.",
    ]);
  },
  CHILD_TEST_TIMEOUT_MS,
);

test(
  'status lists each file with its language and passages, and a broken FAQ with its line: left out, or its last good version searched',
  async () => {
    const store = await sqliteStore();
    const folder = await workFolder({ 'delivery.md': DELIVERY, 'de/lieferung.md': GERMAN, 'faq.yaml': BROKEN_FAQ });

    const broken = await knowledge(['status'], store, folder);
    expect(broken.code, broken.stderr).toBe(0);
    expect(broken.lines.slice(0, 2)).toEqual([`folder: ${folder.knowledge}`, `store: sqlite ${store.env.DATABASE_FILE}`]);
    expect(broken.lines[2]).toMatch(/^file +language +passages +indexed$/);
    expect(broken.lines[3]).toMatch(/^de\/lieferung\.md +de +1 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(broken.lines[4]).toMatch(/^delivery\.md +en +2 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(broken.lines[5]).toMatch(/^faq\.yaml +en +- +not indexed$/);
    expect(broken.lines[6]).toBe('problems:');
    expect(broken.lines[7]).toMatch(/^ {2}faq\.yaml line 4: the entry has no answer .+ \(it is left out until it can be read\)$/);
    expect(broken.lines.at(-1)).toBe('3 files, 3 passages, 1 problem');

    const json = await knowledge(['status', '--json'], store, folder);
    expect(json.code, json.stderr).toBe(0);
    const status = JSON.parse(json.stdout) as { files: { file: string; language: string; passages: number | null }[]; problems: unknown[]; totals: unknown };
    expect(status.files.map((f) => [f.file, f.language, f.passages])).toEqual([
      ['de/lieferung.md', 'de', 1],
      ['delivery.md', 'en', 2],
      ['faq.yaml', 'en', null],
    ]);
    expect(status.problems).toEqual([{ file: 'faq.yaml', line: 4, message: 'the entry has no answer (write "answer:" or "a:")' }]);
    expect(status.totals).toEqual({ files: 3, passages: 3, problems: 1 });

    // Fixed, indexed, then broken again: the search keeps the last good version and says so on stderr.
    await writeFile(path.join(folder.knowledge, 'faq.yaml'), FAQ);
    expect((await knowledge(['status'], store, folder)).stderr.trim()).toBe(`the index caught up with ${folder.knowledge}: 1 file indexed`);
    await writeFile(path.join(folder.knowledge, 'faq.yaml'), BROKEN_FAQ);
    const kept = await knowledge(['search', 'do you ship abroad'], store, folder);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).toBe('faq.yaml line 4: the entry has no answer (write "answer:" or "a:") (its last good version is searched)\n');
    expect(kept.lines[0]).toMatch(/^1\. faq\.yaml › Do you ship abroad\? \(line 4\)/);
  },
  CHILD_TEST_TIMEOUT_MS,
);

test(
  '--help says both commands; no command is exit 2 with one line pointing at --help; KNOWLEDGE=false is exit 1',
  async () => {
    const store = await sqliteStore();
    const folder = await workFolder({ 'delivery.md': DELIVERY });
    const help = await knowledge(['--help'], store, folder);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run knowledge -- <command>/);
    expect(help.stdout).toMatch(/^ {2}search <question> /m);
    expect(help.stdout).toMatch(/^ {2}status /m);
    expect(help.stdout).toContain('--json');

    const none = await knowledge([], store, folder);
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toBe('knowledge: say what to do: search, status. See `npm run knowledge -- --help`.\n');

    const off = await knowledge(['search', 'delivery'], store, folder, { KNOWLEDGE: 'false' });
    expect(off).toMatchObject({ code: 1, stdout: '' });
    expect(off.stderr).toBe('knowledge search: the knowledge base is off (KNOWLEDGE=false): Hotline neither indexes nor searches the documents\n');
  },
  CHILD_TEST_TIMEOUT_MS,
);
