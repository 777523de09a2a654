/**
 * A campaign's definition file as `npm run campaign -- start` reads it: YAML
 * or JSON, checked here with the very schema Hotline checks it with, so each
 * problem points at its line before anything is sent; `contacts` naming a CSV
 * (or JSON) file is read relative to the definition. Problems Hotline finds
 * later (a contact's number) are pointed at the file and line they come from.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CampaignInputSchema } from '../campaigns/definition.js';
import { describeProblem, type CampaignProblem } from '../campaigns/errors.js';
import { UsageError } from '../command-line.js';
import { readableIssues } from '../readable-issues.js';
import { parseYamlFile, type YamlProblem } from '../yaml-file.js';

export type CampaignFile =
  | {
      /** The definition as the API takes it: a contacts file's text (or rows) in place of its path. */
      body: Record<string, unknown>;
      /** A problem Hotline reported, as a line that names the file and line it is about. */
      locate(problem: CampaignProblem): string;
    }
  | { problems: string[] };

/** Reads and checks the definition; UsageError when the file itself cannot be read. */
export async function readCampaignFile(file: string): Promise<CampaignFile> {
  const name = path.basename(file);
  const text = await readText(
    file,
    (reason) =>
      `cannot start the campaign: ${file} ${reason} (looked for ${path.resolve(file)}). ` +
      'Give the path of a campaign definition, a YAML or JSON file, e.g. npm run campaign -- start campaigns/spring.yaml',
  );
  const parsed = parseYamlFile(text, CampaignInputSchema, {
    describe: (issues, data) => readableIssues(issues, data, CampaignInputSchema),
  });
  const problems: YamlProblem[] = 'problems' in parsed ? [...parsed.problems] : [];
  const written = 'problems' in parsed ? parsed.unchecked : { data: parsed.data, lineOf: parsed.lineOf };
  const lineOf = written?.lineOf ?? (() => undefined);
  const at = (field: readonly PropertyKey[]) => {
    const line = lineOf(field);
    return line === undefined ? name : `${name} line ${line}`;
  };

  // A contacts file is read even when the definition has problems: all of them are reported in one go.
  const contactsFile = contactsPath(written?.data);
  let contacts: unknown;
  if (contactsFile !== undefined) {
    const read = await readContacts(path.resolve(path.dirname(file), contactsFile), name);
    if (read.ok) contacts = read.contacts;
    else problems.push({ line: lineOf(['contacts']), path: 'contacts', message: `${contactsFile} ${read.problem}` });
  }
  if (problems.length > 0 || 'problems' in parsed) {
    // In the order of the file, as its author reads it; zod's order follows the schema.
    const inOrder = problems.toSorted((a, b) => (a.line ?? 0) - (b.line ?? 0));
    return { problems: inOrder.map((problem) => describeAt(name, problem)) };
  }
  const body: Record<string, unknown> = { ...parsed.data, ...(contactsFile === undefined ? {} : { contacts }) };

  return {
    body,
    locate(problem) {
      // A problem in a contacts file is named by that file, as its author knows it: a CSV by line, JSON by row.
      if (contactsFile !== undefined) {
        if (problem.field === 'contacts') return `${contactsFile}${problem.line === undefined ? '' : ` line ${problem.line}`}: ${problem.message}`;
        const row = /^contacts\[(\d+)\]/.exec(problem.field);
        if (row) return `${contactsFile} row ${Number(row[1]) + 1}: ${problem.message}`;
      }
      return `${at(fieldPath(problem.field))}: ${describeProblem(problem)}`;
    },
  };
}

/** `spring.yaml line 5: calling_hours[0].from: …`; a JSON file's syntax is JSON's, though YAML reads it. */
function describeAt(name: string, { line, path: field, message }: YamlProblem): string {
  const said = name.endsWith('.json') ? message.replace(/^YAML: /, 'JSON: ') : message;
  return `${name}${line === undefined ? '' : ` line ${line}`}: ${field === '' ? '' : `${field}: `}${said}`;
}

/** The contacts file a definition names: `contacts` as one line of text (CSV text has a header and rows). */
function contactsPath(definition: unknown): string | undefined {
  const contacts = definition !== null && typeof definition === 'object' ? (definition as { contacts?: unknown }).contacts : undefined;
  return typeof contacts === 'string' && contacts.trim() !== '' && !contacts.includes('\n') ? contacts : undefined;
}

/** A contacts file's text (CSV), or its rows (a .json file); else what is wrong with it. */
async function readContacts(file: string, definition: string): Promise<{ ok: true; contacts: unknown } | { ok: false; problem: string }> {
  let text: string;
  try {
    const where = `looked for ${file}, as the path is relative to the folder of ${definition}`;
    text = await readText(file, (reason) => `${reason} (${where}): put the file there, or correct the path`);
  } catch (error) {
    if (error instanceof UsageError) return { ok: false, problem: error.message };
    throw error;
  }
  if (!file.endsWith('.json')) return { ok: true, contacts: text };
  try {
    return { ok: true, contacts: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, problem: `is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** `calling_hours[0].from` → ['calling_hours', 0, 'from']. */
function fieldPath(field: string): (string | number)[] {
  return [...field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) => (match[2] === undefined ? match[1]! : Number(match[2])));
}

/** The file's text; UsageError saying plainly why it cannot be read (as `reason`, which `explain` turns into the message). */
async function readText(file: string, explain: (reason: string) => string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EISDIR'
          ? 'is a folder, not a file'
          : code === 'EACCES' || code === 'EPERM'
            ? 'cannot be read: permission denied'
            : `cannot be read: ${error instanceof Error ? error.message : String(error)}`;
    throw new UsageError(explain(reason), { cause: error });
  }
}
