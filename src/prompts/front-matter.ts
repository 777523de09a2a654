import { parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { freezeStyle, NO_STYLE, STYLE_KEYS, STYLE_SHAPE, styleFrom, type SpeakStyle } from './speak-style.js';
import { AUDIO_NAMES, DEFAULT_SETTINGS, settingsFrom, SYSTEM_SCHEMA, type AudioPaths, type PromptSettings } from './system-settings.js';

export type { SpeakStyle } from './speak-style.js';
export type {
  AudioName,
  AudioPaths,
  KeypadSettings,
  PromptSettings,
  SilenceSettings,
  TransferSettings,
  TransferTargetSettings,
} from './system-settings.js';

export interface FrontMatterProblem {
  severity: 'error' | 'warning';
  message: string;
}

export interface FrontMatterResult {
  /** The defaults when any problem is an error: a half-understood header must not half-apply. */
  settings: PromptSettings;
  /** The clips system.md names, not yet read; empty when any problem is an error. */
  audio: AudioPaths;
  /** The text after the front matter (the whole text if there is none). */
  body: string;
  /** The file line `body` starts on. */
  bodyLine: number;
  problems: FrontMatterProblem[];
}

export interface LineFrontMatterResult {
  /** How this file's line is spoken; empty when any problem is an error. */
  style: SpeakStyle;
  body: string;
  bodyLine: number;
  problems: FrontMatterProblem[];
}

const SYSTEM_KEYS = Object.keys(SYSTEM_SCHEMA.shape);
const LINE_SCHEMA = z.object(STYLE_SHAPE);

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*\r?$/m;

/** Splits off and validates system.md's optional `---` YAML header: the settings of the calls that use it. */
export function parseFrontMatter(text: string): FrontMatterResult {
  const header = readHeader(text);
  const failed = { settings: DEFAULT_SETTINGS, audio: {}, body: header.body, bodyLine: header.bodyLine };
  if (header.yaml === undefined) return { ...failed, problems: header.problems };
  const { doc, data } = header.yaml;
  const problems = unknownKeys(data, SYSTEM_KEYS, `known: ${SYSTEM_KEYS.join(', ')}`);
  problems.push(...unknownClips(data));
  const parsed = SYSTEM_SCHEMA.safeParse(data);
  if (!parsed.success) return { ...failed, problems: [...problems, ...issueProblems(parsed.error)] };
  return { ...settingsFrom(parsed.data, doc), body: header.body, bodyLine: header.bodyLine, problems };
}

/** Splits off and validates the header of any other prompt file: how that file's line is spoken. */
export function parseLineFrontMatter(text: string): LineFrontMatterResult {
  const header = readHeader(text);
  const failed = { style: NO_STYLE, body: header.body, bodyLine: header.bodyLine };
  if (header.yaml === undefined) return { ...failed, problems: header.problems };
  const problems = unknownKeys(
    header.yaml.data,
    STYLE_KEYS,
    `known here: ${STYLE_KEYS.join(', ')}; the settings of the whole call belong in system.md`,
  );
  const parsed = LINE_SCHEMA.safeParse(header.yaml.data);
  if (!parsed.success) return { ...failed, problems: [...problems, ...issueProblems(parsed.error)] };
  return { style: freezeStyle(styleFrom(parsed.data)), body: header.body, bodyLine: header.bodyLine, problems };
}

interface Header {
  body: string;
  bodyLine: number;
  /** Undefined when there is no header, or it is not a YAML mapping (then `problems` says why). */
  yaml: { doc: Document; data: Record<string, unknown> } | undefined;
  problems: FrontMatterProblem[];
}

function readHeader(text: string): Header {
  const opening = OPENING.exec(text);
  if (!opening) return { body: text, bodyLine: 1, yaml: undefined, problems: [] };
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) {
    const message = 'front matter opened with "---" on line 1 is never closed by a "---" line';
    return { body: text, bodyLine: 1, yaml: undefined, problems: [{ severity: 'error', message }] };
  }
  const yamlText = rest.slice(0, closing.index);
  let bodyStart = opening[0].length + closing.index + closing[0].length;
  if (text[bodyStart] === '\n') bodyStart++;
  const body = text.slice(bodyStart);
  const bodyLine = countLines(text.slice(0, bodyStart)) + 1;

  const doc = parseDocument(yamlText, { prettyErrors: false });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e): FrontMatterProblem => ({
      severity: 'error',
      // The header's first line is file line 2.
      message: `front matter is not valid YAML (line ${countLines(yamlText.slice(0, e.pos[0])) + 2}): ${e.message}`,
    }));
    return { body, bodyLine, yaml: undefined, problems };
  }
  const data: unknown = doc.toJS() ?? {};
  if (!isMapping(data)) {
    return { body, bodyLine, yaml: undefined, problems: [{ severity: 'error', message: 'front matter must be "key: value" lines' }] };
  }
  return { body, bodyLine, yaml: { doc, data }, problems: [] };
}

function unknownKeys(data: Record<string, unknown>, known: readonly string[], hint: string): FrontMatterProblem[] {
  return Object.keys(data)
    .filter((key) => !known.includes(key))
    .map((key) => ({ severity: 'warning', message: `unknown front matter key "${key}" is ignored (${hint})` }));
}

function unknownClips(data: Record<string, unknown>): FrontMatterProblem[] {
  const audio = data.audio;
  if (!isMapping(audio)) return [];
  const known: readonly string[] = AUDIO_NAMES;
  return Object.keys(audio)
    .filter((name) => !known.includes(name))
    .map((name) => ({
      severity: 'warning',
      message: `audio.${name} is ignored: Hotline plays clips only for ${AUDIO_NAMES.join(' and ')}`,
    }));
}

function issueProblems(error: z.ZodError): FrontMatterProblem[] {
  return error.issues.flatMap((issue) => explain(issue, [])).map(({ path, message }) => ({
    severity: 'error',
    message: `front matter ${path.map(String).join('.') || 'value'}: ${message}`,
  }));
}

type Issue = z.core.$ZodIssue;

/**
 * A union's own message is only "none of the forms fit"; when the value was
 * clearly meant as one of them (an object for the object form), that form's
 * own complaints say what to fix.
 */
function explain(issue: Issue, prefix: readonly PropertyKey[]): { path: PropertyKey[]; message: string }[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union') {
    const meant = issue.errors.find((branch) => !branch.every(isWrongType));
    if (meant) return meant.flatMap((inner) => explain(inner, path));
  }
  return [{ path, message: issue.message }];
}

/** True if the value is not even of the branch's type, so that branch was not what the writer meant. */
function isWrongType(issue: Issue): boolean {
  if (issue.path.length > 0) return false;
  if (issue.code === 'invalid_type') return true;
  return issue.code === 'invalid_union' && issue.errors.length > 0 && issue.errors.every((branch) => branch.every(isWrongType));
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function countLines(text: string): number {
  let lines = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines++;
  return lines;
}
