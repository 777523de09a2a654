/**
 * What a report asks of the model: report.md's fields and instruction, the
 * schemas made of them, the transcript as the model reads it, and the
 * demo model's answer.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test } from 'vitest';
import { demoScript } from '../src/demo/demo-script.js';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';
import { parseJsonAnswer } from '../src/reports/json-answer.js';
import { reportAnswerSchema, reportJsonSchema } from '../src/reports/report-fields.js';
import { checkReportPrompt, parseReportPrompt, readReportPrompt } from '../src/reports/report-prompt.js';
import { readTranscriptLines } from '../src/reports/transcript-lines.js';
import { renderTranscript } from '../src/reports/transcript-text.js';
import { CHILD_TEST_TIMEOUT_MS, childEnv, isolatedCwd, repoRoot, tsxArgs } from './helpers/child-process.js';
import { callSummary, ORDER_CALL, writeTranscript } from './helpers/reports.js';

const SHIPPED = path.join(repoRoot, 'prompts');
const TYPE_PROBLEM = 'a field is boolean, string, number, integer, or a list of the allowed strings, or { type, description }';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-report-prompt-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

function problemsOf(text: string): string[] {
  const parsed = parseReportPrompt(text);
  return 'problems' in parsed ? parsed.problems : [];
}

describe('report.md', () => {
  test('the shipped file: four fields and the instruction', async () => {
    const read = await readReportPrompt(SHIPPED);
    expect(read.status).toBe('ok');
    if (read.status !== 'ok') return;
    expect(read.prompt.fields).toEqual([
      { name: 'callback_wanted', type: 'boolean', description: 'The caller asked to be called back' },
      { name: 'customer_number', type: 'string', description: 'The customer number the caller gave, or empty' },
      { name: 'sentiment', type: ['positive', 'neutral', 'negative'], description: undefined },
      { name: 'resolved', type: 'boolean', description: undefined },
    ]);
    expect(read.prompt.instruction).toMatch(/^Summarise the call in two or three sentences for the business's staff/);
    expect(await checkReportPrompt(SHIPPED)).toEqual({
      file: 'report.md',
      summary: '4 fields (callback_wanted, customer_number, sentiment, resolved)',
      problems: [],
    });
    expect((await checkReportPrompt(path.join(SHIPPED, 'de')))?.problems).toEqual([]);
  });

  test('without front matter the whole text is the instruction; without the file there is nothing to check', async () => {
    expect(parseReportPrompt('Summarise it.\n')).toEqual({ prompt: { fields: [], instruction: 'Summarise it.' } });
    expect(parseReportPrompt('---\n---\nSummarise it.')).toEqual({ prompt: { fields: [], instruction: 'Summarise it.' } });
    expect(await readReportPrompt(await tempDir())).toEqual({ status: 'missing' });
    expect(await checkReportPrompt(await tempDir())).toBeUndefined();
    expect(await checkReportPrompt(await tempDir({ 'report.md': 'Summarise it.' }))).toMatchObject({
      summary: 'summary only, no fields',
      problems: [],
    });
    expect(await checkReportPrompt(await tempDir({ 'report.md': '---\nfields:\n---\n' }))).toMatchObject({
      problems: ['is empty: give an instruction for the summary, fields, or both'],
    });
  });

  test('every problem names its line in the file', () => {
    const text = [
      '---',
      'fields:',
      '  ok: boolean',
      '  a: bool',
      '  b: [x, x]',
      '  summary: string',
      '  9x: string',
      '  c: { type: string, desc: 1 }',
      '  d: []',
      'other: 1',
      '---',
      'Summarise.',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      `line 4: fields.a: ${TYPE_PROBLEM}`,
      'line 5: fields.b: each allowed value may be listed only once',
      `line 6: fields.summary: "summary" is the report's own; give the field another name`,
      'line 7: fields.9x: a field name is letters, digits and _ (not starting with a digit), at most 64 of them',
      'line 8: fields.c.desc: unknown key "desc" (known: type, description)',
      'line 9: fields.d: give at least one allowed value',
      'line 10: other: unknown key "other"',
    ]);
    expect(problemsOf('---\nfields: [a\n---\n')).toEqual([expect.stringMatching(/^line 3: YAML: /)]);
    expect(problemsOf('---\nfields:\n  a: string\n')).toEqual(['line 1: front matter opened with "---" is never closed by a "---" line']);
  });

  test('a description cut at a comma says to quote it', () => {
    expect(problemsOf('---\nfields:\n  n: { type: string, description: The number, or empty }\n---\n')).toEqual([
      'line 3: fields.n.or empty: "or empty" is read as a key of its own: ' +
        'a description with a comma goes in quotes, description: "…, or empty"',
    ]);
  });

  test('npm run prompts:check lists report.md and counts its problems', async () => {
    const dir = await tempDir();
    await cp(SHIPPED, dir, { recursive: true, filter: (source) => path.relative(SHIPPED, source).split(path.sep)[0] !== 'tools' });
    await writeFile(path.join(dir, 'report.md'), '---\nfields:\n  a: bool\n---\nSummarise.\n');
    const failure = await promisify(execFile)(process.execPath, tsxArgs('src/cli/prompts-check.ts', dir), { cwd: isolatedCwd(), env: childEnv() }).then(
      () => expect.unreachable('prompts:check passed'),
      (error: unknown) => error as { code: number; stdout: string },
    );
    expect(failure.code).toBe(1);
    const lines = failure.stdout.trimEnd().split('\n');
    const at = lines.indexOf('report.md: not usable');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe(`  error: line 3: fields.a: ${TYPE_PROBLEM}`);
    expect(lines.at(-1)).toMatch(/^\d+ files, (\d+ evals, )?1 problem$/);
  }, CHILD_TEST_TIMEOUT_MS);
});

describe('the schemas made of the fields', () => {
  const fields = [
    { name: 'callback_wanted', type: 'boolean', description: 'Asked for a callback' },
    { name: 'sentiment', type: ['positive', 'neutral', 'negative'], description: undefined },
    { name: 'minutes', type: 'integer', description: undefined },
    { name: 'score', type: 'number', description: undefined },
    { name: 'note', type: 'string', description: undefined },
  ] as const;

  test('the JSON schema asks for every field and the summary, strictly', () => {
    expect(reportJsonSchema(fields)).toEqual({
      type: 'object',
      properties: {
        summary: { type: 'string', description: expect.any(String) },
        callback_wanted: { type: 'boolean', description: 'Asked for a callback' },
        sentiment: { type: 'string', enum: ['positive', 'neutral', 'negative'] },
        minutes: { type: 'integer' },
        score: { type: 'number' },
        note: { type: 'string' },
      },
      required: ['summary', 'callback_wanted', 'sentiment', 'minutes', 'score', 'note'],
      additionalProperties: false,
    });
  });

  test('the zod schema takes what fits, drops extra keys, and says what does not fit', () => {
    const schema = reportAnswerSchema(fields);
    const answer = { summary: 'S', callback_wanted: true, sentiment: 'neutral', minutes: 2, score: 0.5, note: '', extra: 1 };
    expect(schema.parse(answer)).toEqual({
      summary: 'S',
      fields: { callback_wanted: true, sentiment: 'neutral', minutes: 2, score: 0.5, note: '' },
    });
    const wrong = schema.safeParse({ ...answer, sentiment: 'meh', minutes: 2.5, summary: undefined });
    expect(wrong.error?.issues.map((issue) => issue.path.join('.')).sort()).toEqual(['minutes', 'sentiment', 'summary']);
  });

  test('the JSON object in an answer: alone, fenced, or inside words', () => {
    expect(parseJsonAnswer('{"a":1}')).toEqual({ a: 1 });
    expect(parseJsonAnswer('```json\n{"a":1}\n```')).toEqual({ a: 1 });
    expect(parseJsonAnswer('```\n{"a":"}"}\n```')).toEqual({ a: '}' });
    expect(parseJsonAnswer('Here is the report: {"a":{"b":"x \\" }"}} Hope it helps {"c":2}')).toEqual({ a: { b: 'x " }' } });
    expect(parseJsonAnswer('no JSON here')).toBeUndefined();
    expect(parseJsonAnswer('[1, 2]')).toBeUndefined();
    expect(parseJsonAnswer('{"a": ')).toBeUndefined();
  });
});

describe('the transcript as the model reads it', () => {
  test('caller and agent lines, tools, interruptions; no events, no numbers', async () => {
    const dir = await tempDir();
    const { lines } = await readTranscriptLines(await writeTranscript(dir, 'call-1', ORDER_CALL));
    expect(renderTranscript(callSummary({ endReason: 'transferred' }), lines)).toBe(
      [
        '[inbound call, 66 s, ended: transferred]',
        'Agent: Hello, thanks for calling! How can I help you today?',
        'Caller: Where is my order 4711?',
        '[tool order_status → ok]',
        'Agent: Your order 4711 has shipped and',
        '[the caller interrupted]',
        'Caller: Can someone call me back? My customer number is K 17.',
        'Agent: Of course, a colleague will call you back.',
      ].join('\n'),
    );
  });

  test('broken lines are skipped; a missing file has no lines', async () => {
    const dir = await tempDir({
      'broken.jsonl': [
        '{"ts":"t","role":"user","text":"Hi"}',
        '{"ts":"t","role":"assis',
        'not json',
        '{"role":"robot","text":"x"}',
        '{"ts":"t","role":"tool","text":"x","name":"transfer"}',
        '',
      ].join('\n'),
    });
    expect((await readTranscriptLines(path.join(dir, 'broken.jsonl'))).lines).toEqual([
      { ts: 't', role: 'user', text: 'Hi', interrupted: false, tool: null },
      { ts: 't', role: 'tool', text: 'x', interrupted: false, tool: { name: 'transfer', outcome: null } },
    ]);
    expect(await readTranscriptLines(path.join(dir, 'none.jsonl'))).toEqual({ lines: [], truncated: false });
  });

  test('a long call keeps its start and its end', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => ({
      ts: 't',
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      text: `line ${i} ${'x'.repeat(40)}`,
      interrupted: false,
      tool: null,
    }));
    const text = renderTranscript(callSummary(), lines, 24_000);
    expect(text.length).toBeLessThanOrEqual(24_100);
    expect(text).toContain('Caller: line 0 ');
    expect(text).toContain('Agent: line 1999 ');
    expect(text).toMatch(/\n\[… \d+ lines of the call left out …\]\n/);
    expect(text).not.toContain('line 1000 ');
    // Cut at line ends: every line is whole.
    for (const line of text.split('\n')) expect(line).toMatch(/^(\[.*\]|(Caller|Agent): line \d+ x{40})$/);
  });
});

describe('the demo model', () => {
  const reportRequest = (schema: Record<string, unknown>, name = 'call_report'): ChatRequestBody => ({
    model: 'hotline-demo',
    messages: [
      { role: 'system', content: 'Summarise.' },
      { role: 'user', content: '[inbound call, 5 s, ended: caller_hung_up]\nAgent: Hello\nCaller: Hi\nCaller: Bye' },
    ],
    stream: false,
    response_format: { type: 'json_schema', json_schema: { name, strict: true, schema } },
  });

  test('answers a report request with an object that fits its schema', () => {
    const fields = [
      { name: 'callback_wanted', type: 'boolean', description: undefined },
      { name: 'customer_number', type: 'string', description: undefined },
      { name: 'sentiment', type: ['positive', 'neutral', 'negative'], description: undefined },
      { name: 'minutes', type: 'integer', description: undefined },
    ] as const;
    const reply = demoScript(reportRequest(reportJsonSchema(fields)));
    const answer = JSON.parse(reply.content ?? '') as unknown;
    expect(answer).toEqual({
      summary: 'The demo model read 2 caller lines and wrote no real summary.',
      callback_wanted: false,
      customer_number: '',
      sentiment: 'positive',
      minutes: 0,
    });
    expect(reportAnswerSchema(fields).safeParse(answer).success).toBe(true);
    expect(reply.toolCalls).toBeUndefined();
  });

  test("leaves other requests with a response format (the voicemail judge's) and a call's turns as they were", () => {
    const judgeSchema = { type: 'object', properties: { answered_by: { type: 'string', enum: ['voicemail', 'human'] } } };
    const judge = demoScript(reportRequest(judgeSchema, 'answered_by'));
    expect(judge.content ?? '').not.toContain('demo model read');
    const turn = demoScript({ model: 'hotline-demo', messages: [{ role: 'user', content: 'What are your opening hours?' }] });
    expect(turn.content).toMatch(/^We're open Monday to Friday/);
  });
});
