/**
 * prompts/report.md: what a call's report asks the model for. The front
 * matter declares the structured fields, the body is the instruction for the
 * summary:
 *
 *   ---
 *   fields:
 *     callback_wanted: { type: boolean, description: The caller asked to be called back }
 *     sentiment: [positive, neutral, negative]
 *   ---
 *   Summarise the call in two or three sentences for the business's staff.
 *
 * The file is read for each report, so an edit applies to the next call that
 * ends. Without it, reports carry no summary and no fields.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { REPORT_PROMPT_FILE } from '../prompts/prompt-files.js';
import { describeYamlProblem, parseYamlFile, type YamlProblem } from '../yaml-file.js';
import { SUMMARY_KEY, type ReportField } from './report-fields.js';

export interface ReportPrompt {
  readonly fields: readonly ReportField[];
  /** The body: the instruction for the summary; '' when the file has none. */
  readonly instruction: string;
}

export type ReportPromptRead =
  | { readonly status: 'missing' }
  | { readonly status: 'invalid'; readonly problems: readonly string[] }
  | { readonly status: 'ok'; readonly prompt: ReportPrompt };

/** Names a JSON schema property may have in every model's structured output, and a receiver's column too. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** OpenAI's strict structured outputs allow 100 properties; one is the summary. */
const MAX_FIELDS = 99;

const TYPE_HINT = 'a field is boolean, string, number, integer, or a list of the allowed strings';

// A string first: a value of another kind then fails as the wrong kind, and the union can tell which form was meant.
const SCALAR = z.string().pipe(z.enum(['boolean', 'string', 'number', 'integer'], { error: TYPE_HINT }));
const ALLOWED = z
  .array(z.string({ error: 'an allowed value is a string' }).trim().min(1, 'an allowed value may not be empty'), { error: TYPE_HINT })
  .min(1, 'give at least one allowed value')
  .refine((values) => new Set(values).size === values.length, 'each allowed value may be listed only once');
const TYPE = z.union([SCALAR, ALLOWED], { error: TYPE_HINT });

const FIELD_KEYS = ['type', 'description'];
const DESCRIBED = z
  .looseObject({ type: TYPE, description: z.string().trim().min(1).optional() })
  .superRefine((spec, ctx) => {
    for (const [key, value] of Object.entries(spec)) {
      if (FIELD_KEYS.includes(key)) continue;
      // In `{ type: string, description: A number, or empty }` YAML ends the description at the comma.
      const message =
        value === null
          ? `"${key}" is read as a key of its own: a description with a comma goes in quotes, description: "…, ${key}"`
          : `unknown key "${key}" (known: ${FIELD_KEYS.join(', ')})`;
      ctx.addIssue({ code: 'custom', path: [key], message });
    }
  });
const FIELD = z.union([TYPE, DESCRIBED], { error: `${TYPE_HINT}, or { type, description }` });

const HEADER = z.strictObject({
  fields: z
    .record(
      z
        .string()
        .regex(FIELD_NAME, 'a field name is letters, digits and _ (not starting with a digit), at most 64 of them')
        .refine((name) => name !== SUMMARY_KEY, `"${SUMMARY_KEY}" is the report's own; give the field another name`),
      FIELD,
    )
    .refine((fields) => Object.keys(fields).length <= MAX_FIELDS, `at most ${MAX_FIELDS} fields`)
    .nullish(),
});

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*\r?$/m;

/** Reads `<promptsDir>/report.md` now: an edit applies to the next report without a restart. */
export async function readReportPrompt(promptsDir: string): Promise<ReportPromptRead> {
  let text: string;
  try {
    text = await readFile(path.join(promptsDir, REPORT_PROMPT_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    return { status: 'invalid', problems: [`cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`] };
  }
  const parsed = parseReportPrompt(text);
  return 'problems' in parsed ? { status: 'invalid', problems: parsed.problems } : { status: 'ok', prompt: parsed.prompt };
}

/** Splits off and checks the front matter; every problem names its line in the file. */
export function parseReportPrompt(text: string): { prompt: ReportPrompt } | { problems: string[] } {
  const opening = OPENING.exec(text);
  if (!opening) return { prompt: { fields: [], instruction: text.trim() } };
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) return { problems: ['line 1: front matter opened with "---" is never closed by a "---" line'] };
  const yaml = rest.slice(0, closing.index);
  const instruction = rest.slice(closing.index + closing[0].length).trim();
  if (yaml.trim() === '') return { prompt: { fields: [], instruction } };

  const header = parseYamlFile(yaml, HEADER);
  // The front matter's first line is the file's second.
  if ('problems' in header) return { problems: header.problems.map((problem) => describeYamlProblem(shift(problem, 1))) };
  const fields = Object.entries(header.data.fields ?? {}).map(([name, spec]): ReportField => {
    const described = typeof spec === 'object' && !Array.isArray(spec) ? spec : { type: spec, description: undefined };
    return { name, type: described.type, description: described.description };
  });
  return { prompt: { fields, instruction } };
}

function shift(problem: YamlProblem, lines: number): YamlProblem {
  return problem.line === undefined ? problem : { ...problem, line: problem.line + lines };
}

export interface ReportPromptCheck {
  readonly file: typeof REPORT_PROMPT_FILE;
  /** `4 fields (callback_wanted, customer_number, sentiment, resolved)`, or why there is nothing to check. */
  readonly summary: string;
  /** Each an error: a broken report.md makes reports without fields. */
  readonly problems: readonly string[];
}

/** What prompts:check says of report.md; undefined when the folder has none (reports are then made without summary). */
export async function checkReportPrompt(promptsDir: string): Promise<ReportPromptCheck | undefined> {
  const read = await readReportPrompt(promptsDir);
  if (read.status === 'missing') return undefined;
  if (read.status === 'invalid') return { file: REPORT_PROMPT_FILE, summary: 'not usable', problems: read.problems };
  const { fields, instruction } = read.prompt;
  const problems = fields.length === 0 && instruction === '' ? ['is empty: give an instruction for the summary, fields, or both'] : [];
  const names = fields.map((field) => field.name).join(', ');
  const summary = fields.length === 0 ? 'summary only, no fields' : `${fields.length} field${fields.length === 1 ? '' : 's'} (${names})`;
  return { file: REPORT_PROMPT_FILE, summary, problems };
}
