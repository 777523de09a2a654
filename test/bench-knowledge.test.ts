/**
 * The bench's knowledge phase (bench/knowledge.ts) in a tiny configuration: a synthetic folder of
 * 60 passages indexed through the real KnowledgeBase on SQLite and searched with a few questions,
 * PostgreSQL skipped (no server on port 1), and the figures as the report prints and judges them.
 * No timing is asserted: only that everything was indexed, asked and reported.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchQuestions, writeKnowledgeFolder } from '../bench/knowledge-documents.js';
import { KnowledgeFolders, measureKnowledgeRetrieval, type KnowledgeBenchResult, type RetrievalRun } from '../bench/knowledge.js';
import { evaluateTargets, machine, render, type BenchResults } from '../bench/report.js';
import { idOf, tagFor } from '../bench/replies.js';
import { markdownPassages } from '../src/knowledge/markdown-passages.js';

const written: string[] = [];

afterAll(async () => {
  for (const dir of written) await rm(dir, { recursive: true, force: true });
});

describe('the synthetic knowledge folder', () => {
  it('holds exactly the passages asked for, a section each, some of them German under de/', async () => {
    const dir = path.join(tmpdir(), `hotline-bench-knowledge-test-${process.pid}`);
    written.push(dir);
    const figures = await writeKnowledgeFolder(dir, 300, 1);
    expect(figures.passages).toBe(300);
    let passages = 0;
    const files: string[] = [];
    const walk = async (folder: string): Promise<void> => {
      for (const entry of await readdir(folder, { withFileTypes: true })) {
        const absolute = path.join(folder, entry.name);
        if (entry.isDirectory()) await walk(absolute);
        else files.push(absolute);
      }
    };
    await walk(dir);
    for (const file of files) passages += markdownPassages(await readFile(file, 'utf8')).length;
    expect(passages).toBe(300);
    expect(files).toHaveLength(figures.files);
    expect(files.some((file) => file.startsWith(path.join(dir, 'de')))).toBe(true);
    expect(figures.germanPassages).toBeGreaterThan(0);
    expect(figures.germanPassages).toBeLessThan(300);
  });

  it('is written the same for the same seed, and so are the questions', async () => {
    const a = path.join(tmpdir(), `hotline-bench-knowledge-a-${process.pid}`);
    const b = path.join(tmpdir(), `hotline-bench-knowledge-b-${process.pid}`);
    written.push(a, b);
    expect({ ...(await writeKnowledgeFolder(a, 50, 3)), dir: '' }).toEqual({ ...(await writeKnowledgeFolder(b, 50, 3)), dir: '' });
    expect(benchQuestions(20, 1)).toEqual(benchQuestions(20, 1));
    expect(benchQuestions(20, 1)).toHaveLength(20);
  });

  it("gives the first-speak callers' words a question per reply id", () => {
    expect(idOf(tagFor(12_345))).toBe(12_345);
  });
});

describe('the knowledge phase', () => {
  let result: Omit<KnowledgeBenchResult, 'firstSpeak'>;

  it('indexes the folder on SQLite, times every question, and says PostgreSQL was skipped', async () => {
    const folders = await KnowledgeFolders.write([60], 1, () => undefined);
    try {
      result = await measureKnowledgeRetrieval(
        { postgresAdminUrl: 'postgres://postgres@127.0.0.1:1/postgres', sizes: [60], questions: 12, warmUpQuestions: 3, seed: 1, progress: () => undefined },
        folders,
      );
    } finally {
      await folders.remove();
    }
    const [sqlite, postgres] = result.stores;
    expect(sqlite?.store).toBe('sqlite');
    const run = sqlite?.runs[0];
    expect(run).toMatchObject({ passages: 60, questions: 12, failed: 0 });
    expect(run?.files).toBe(result.folders[0]?.files);
    expect(run?.findMs.count).toBe(12);
    expect(run?.answered).toBeGreaterThan(0);
    expect(run?.indexing.maxMs).toBeGreaterThanOrEqual(0);
    expect(postgres).toMatchObject({ store: 'postgres', runs: [], skipped: expect.stringContaining('no PostgreSQL') });
  }, 60_000);

  it('is printed, and the stall while indexing 10,000 passages judged against 50 ms', () => {
    const results = (knowledge: KnowledgeBenchResult): BenchResults => {
      const partial = { machine: machine(), options: {}, startedAt: '', durationS: 1, knowledge };
      return { ...partial, targets: evaluateTargets(partial) };
    };
    const text = render(results(result));
    expect(text).toContain("10. Knowledge: the business's documents indexed and searched");
    expect(text).toContain('PostgreSQL: skipped: no PostgreSQL');
    // 60 passages: no aim to judge.
    expect(results(result).targets).toEqual([]);

    const tenThousand: RetrievalRun = {
      ...result.stores[0]!.runs[0]!,
      passages: 10_000,
      indexing: { maxMs: 80, p99Ms: 3, maxOwnMs: 12, over20: 2, over50: 1, gcMaxMs: 4, longest: [{ ms: 80, waitedMs: 70, atS: 1.5, during: 'writing a.md (40 passages)' }] },
    };
    const judged = results({ ...result, stores: [{ store: 'sqlite', where: 'a temp file', runs: [tenThousand] }] });
    expect(judged.targets).toEqual([expect.objectContaining({ value: 80, limit: 50, pass: false, name: expect.stringContaining('indexing 10,000 passages, SQLite') })]);
    expect(render(judged)).toContain('80.0 ms (70.0; at 1.50 s): writing a.md (40 passages)');
  });
});
