/**
 * The text messages a call may send: `<PROMPTS_DIR>/sms/<name>.md`, one template a file, its name the
 * file's, and the same name under `<PROMPTS_DIR>/<language>/sms/` for calls in that language. A file
 * may start with front matter naming what it is for (`description:`), which the model is offered;
 * its body is filled like any prompt file, `{{placeholder}}` and `{{placeholder|default}}`, with the
 * call's variables and the fields the model gives.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import type { PromptProblem } from '../prompts/folder-load.js';
import { compileTemplate, TemplateSyntaxError, type Template, type TemplateVariables } from '../prompts/template.js';

export const SMS_FOLDER = 'sms';
/** The longest message sent, in characters, once filled in: three SMS parts' worth. */
export const SMS_MAX_CHARS = 480;
/** A template's name, its file's name without `.md`. */
export const SMS_TEMPLATE_NAME = /^[a-z0-9_-]+$/;
/** The longest description the model is offered of one template. */
const DESCRIPTION_MAX_CHARS = 200;
/** A folder of a language's prompts: `de`, `en-gb`, `pt-BR`. */
const LANGUAGE_FOLDER = /^[a-z]{2,3}(?:[-_][a-z0-9]{2,8})*$/i;
const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

export interface SmsTemplate {
  readonly name: string;
  /** What it is for, as its front matter says. */
  readonly description: string | undefined;
  readonly template: Template;
  /** Where it is, from the prompts folder: `sms/directions.md`, `de/sms/directions.md`. */
  readonly file: string;
}

export interface SmsTemplates {
  /** `sms/`: the templates offered, by name. */
  readonly defaults: ReadonlyMap<string, SmsTemplate>;
  /** `<language>/sms/`, by the language folder's name in lower case: each overrides the default of its name. */
  readonly languages: ReadonlyMap<string, ReadonlyMap<string, SmsTemplate>>;
  /** Files left out, and why; files used with a warning. */
  readonly problems: readonly PromptProblem[];
  /** The folders a change in which may change the templates (for a watch). */
  readonly folders: readonly string[];
  /** Equal for equal files and problems. */
  readonly fingerprint: string;
}

export const NO_SMS_TEMPLATES: SmsTemplates = Object.freeze({
  defaults: new Map(),
  languages: new Map(),
  problems: [],
  folders: [],
  fingerprint: '',
});

/** Reads every template of the prompts folder `dir`; a file with an error is left out, the others are used. Never rejects for a file's sake. */
export async function readSmsTemplates(dir: string): Promise<SmsTemplates> {
  const problems: PromptProblem[] = [];
  const texts: string[] = [];
  const defaultsFolder = path.join(dir, SMS_FOLDER);
  const defaults = await readFolder(dir, SMS_FOLDER, problems, texts);
  const folders = [defaultsFolder];
  const languages = new Map<string, ReadonlyMap<string, SmsTemplate>>();
  for (const language of await languageFolders(dir)) {
    folders.push(path.join(dir, language), path.join(dir, language, SMS_FOLDER));
    const own = await readFolder(dir, path.join(language, SMS_FOLDER), problems, texts);
    if (own.size === 0) continue;
    for (const template of own.values()) {
      if (defaults.has(template.name)) continue;
      problems.push({
        file: template.file,
        severity: 'warning',
        message: `is never used: only the templates of ${SMS_FOLDER}/ are offered, and there is no ${SMS_FOLDER}/${template.name}.md for this one to stand in for`,
      });
    }
    languages.set(language.toLowerCase(), own);
  }
  const fingerprint = createHash('sha256').update(JSON.stringify({ texts, problems })).digest('hex');
  return Object.freeze({ defaults, languages, problems, folders, fingerprint });
}

/** The template `name` for a call in `language` (the call's variable, `de` or `de-DE`): its language's own, else the default. */
export function smsTemplateFor(templates: SmsTemplates, name: string, language: string | undefined): SmsTemplate | undefined {
  const wanted = language?.trim().toLowerCase().replace(/_/g, '-');
  if (wanted) {
    for (const key of new Set([wanted, wanted.split('-')[0]!])) {
      const own = templates.languages.get(key)?.get(name);
      if (own) return own;
    }
  }
  return templates.defaults.get(name);
}

export type RenderedSms =
  | { readonly ok: true; readonly message: string }
  | { readonly ok: false; readonly missing: readonly string[] }
  | { readonly ok: false; readonly tooLong: number };

/** The message `template` makes of `variables`: plain text, whitespace collapsed; or what it lacks, or how long it came out. */
export function renderSms(template: SmsTemplate, variables: TemplateVariables): RenderedSms {
  const missing = new Set<string>();
  const text = template.template.render(variables, (name) => missing.add(name));
  if (missing.size > 0) return { ok: false, missing: [...missing] };
  const message = text.replace(/\s+/g, ' ').trim();
  if (message.length > SMS_MAX_CHARS) return { ok: false, tooLong: message.length };
  return { ok: true, message };
}

/** The placeholders of a template that need a value: those without a default. */
export function blanksOf(template: SmsTemplate): string[] {
  const names = new Set<string>();
  for (const part of template.template.parts) if (part.kind === 'placeholder' && part.defaultValue === undefined) names.add(part.name);
  return [...names];
}

async function languageFolders(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && e.name !== SMS_FOLDER && LANGUAGE_FOLDER.test(e.name))
    .map((e) => e.name)
    .sort();
}

/** One folder's templates, by name; `folder` is from the prompts folder `dir`. */
async function readFolder(dir: string, folder: string, problems: PromptProblem[], texts: string[]): Promise<Map<string, SmsTemplate>> {
  const templates = new Map<string, SmsTemplate>();
  let names: string[];
  try {
    names = (await readdir(path.join(dir, folder))).sort();
  } catch {
    // No folder is no templates.
    return templates;
  }
  for (const entry of names) {
    const file = path.join(folder, entry).split(path.sep).join('/');
    if (!entry.endsWith('.md')) continue;
    if (entry.toLowerCase() === 'readme.md') continue;
    const name = entry.slice(0, -'.md'.length);
    if (!SMS_TEMPLATE_NAME.test(name)) {
      problems.push({ file, severity: 'error', message: `"${name}" is no template name: use lower-case letters, digits, - and _ (the file is left out)` });
      continue;
    }
    let text: string;
    try {
      text = (await readFile(path.join(dir, folder, entry), 'utf8')).replace(/^\uFEFF/, '');
    } catch (error) {
      // A folder named like a template, or a file that went away while the folder was read.
      problems.push({ file, severity: 'error', message: `cannot be read: ${error instanceof Error ? error.message : String(error)}` });
      continue;
    }
    texts.push(file, text);
    const template = parseTemplate(name, file, text, problems);
    if (template) templates.set(name, template);
  }
  return templates;
}

function parseTemplate(name: string, file: string, text: string, problems: PromptProblem[]): SmsTemplate | undefined {
  const problem = (severity: PromptProblem['severity'], message: string): void => {
    problems.push({ file, severity, message });
  };
  let body = text;
  let firstLine = 1;
  let description: string | undefined;
  const header = FRONT_MATTER.exec(text);
  if (header) {
    body = text.slice(header[0].length);
    firstLine = header[0].split('\n').length;
    const doc = parseDocument(header[1]!, { prettyErrors: false });
    const data: unknown = doc.errors.length > 0 ? undefined : doc.toJS();
    if (data === undefined || data === null || typeof data !== 'object' || Array.isArray(data)) {
      problem('error', 'front matter must be "key: value" lines (description: …); the file is left out');
      return undefined;
    }
    for (const [key, value] of Object.entries(data)) {
      if (key !== 'description') {
        problem('warning', `unknown front matter key "${key}" is ignored (known here: description)`);
        continue;
      }
      if (typeof value !== 'string' || value.trim() === '') {
        problem('error', 'description must be text; the file is left out');
        return undefined;
      }
      description = value.replace(/\s+/g, ' ').trim();
      if (description.length > DESCRIPTION_MAX_CHARS) {
        problem('warning', `description is ${description.length} characters; the model is offered its first ${DESCRIPTION_MAX_CHARS}`);
        description = description.slice(0, DESCRIPTION_MAX_CHARS);
      }
    }
  } else if (/^---[ \t]*\r?\n/.test(text)) {
    problem('error', 'front matter opened with "---" on line 1 is never closed by a "---" line; the file is left out');
    return undefined;
  }
  // A comment is for whoever edits the file, never in the message; its lines stay, so that a problem names the right line.
  body = body.replace(/<!--[\s\S]*?-->/g, (comment) => comment.replace(/[^\n]/g, ''));
  if (body.trim() === '') {
    problem('error', 'is empty; the file is left out');
    return undefined;
  }
  let template: Template;
  try {
    template = compileTemplate(body, { firstLine });
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    for (const issue of error.issues) problem('error', `line ${issue.line}, column ${issue.column}: ${issue.message}`);
    return undefined;
  }
  // What the body is without its placeholders: a message that is longer than the limit whatever it is filled with is never sent.
  const fixed = template.parts.map((p) => (p.kind === 'literal' ? p.text : (p.defaultValue ?? ''))).join('').replace(/\s+/g, ' ').trim();
  if (fixed.length > SMS_MAX_CHARS) {
    problem('error', `is ${fixed.length} characters before its placeholders are filled; a text message is at most ${SMS_MAX_CHARS}. The file is left out`);
    return undefined;
  }
  return Object.freeze({ name, description, template, file });
}
