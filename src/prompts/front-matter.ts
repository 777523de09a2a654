import { isScalar, parseDocument, type Document } from 'yaml';
import { z } from 'zod';

/** What system.md's front matter may set for the calls that use it. */
export interface PromptSettings {
  model?: string;
  temperature?: number;
  /** Named transfer destinations the model may choose from. */
  transferTargets: Record<string, string>;
}

export interface FrontMatterProblem {
  severity: 'error' | 'warning';
  message: string;
}

export interface FrontMatterResult {
  /** Empty when any problem is an error: a half-understood header must not half-apply. */
  settings: PromptSettings;
  /** The text after the front matter (the whole text if there is none). */
  body: string;
  /** The file line `body` starts on. */
  bodyLine: number;
  problems: FrontMatterProblem[];
}

const schema = z.object({
  model: z.string().trim().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  transfer_targets: z
    .record(z.string().trim().min(1), z.union([z.string().trim().min(1), z.number().int().nonnegative()]))
    .optional(),
});

const KNOWN_KEYS = Object.keys(schema.shape);

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*\r?$/m;

/** Splits off and validates an optional `---` YAML header at the very top of `text`. */
export function parseFrontMatter(text: string): FrontMatterResult {
  const opening = OPENING.exec(text);
  if (!opening) return { settings: { transferTargets: {} }, body: text, bodyLine: 1, problems: [] };
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) {
    return {
      settings: { transferTargets: {} },
      body: text,
      bodyLine: 1,
      problems: [{ severity: 'error', message: 'front matter opened with "---" on line 1 is never closed by a "---" line' }],
    };
  }
  const yamlText = rest.slice(0, closing.index);
  let bodyStart = opening[0].length + closing.index + closing[0].length;
  if (text[bodyStart] === '\n') bodyStart++;
  const bodyLine = countLines(text.slice(0, bodyStart)) + 1;
  const { settings, problems } = parseSettings(yamlText);
  const failed = problems.some((p) => p.severity === 'error');
  return { settings: failed ? { transferTargets: {} } : settings, body: text.slice(bodyStart), bodyLine, problems };
}

function parseSettings(yamlText: string): { settings: PromptSettings; problems: FrontMatterProblem[] } {
  const settings: PromptSettings = { transferTargets: {} };
  const doc = parseDocument(yamlText, { prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      settings,
      problems: doc.errors.map((e) => ({
        severity: 'error',
        // The header's first line is file line 2.
        message: `front matter is not valid YAML (line ${countLines(yamlText.slice(0, e.pos[0])) + 2}): ${e.message}`,
      })),
    };
  }
  const data: unknown = doc.toJS() ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { settings, problems: [{ severity: 'error', message: 'front matter must be "key: value" lines' }] };
  }
  const problems: FrontMatterProblem[] = Object.keys(data)
    .filter((key) => !KNOWN_KEYS.includes(key))
    .map((key) => ({
      severity: 'warning',
      message: `unknown front matter key "${key}" is ignored (known: ${KNOWN_KEYS.join(', ')})`,
    }));
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push({ severity: 'error', message: `front matter ${issue.path.join('.') || 'value'}: ${issue.message}` });
    }
    return { settings, problems };
  }
  const { model, temperature, transfer_targets: targets = {} } = parsed.data;
  if (model !== undefined) settings.model = model;
  if (temperature !== undefined) settings.temperature = temperature;
  for (const [name, target] of Object.entries(targets)) {
    if (typeof target === 'string') settings.transferTargets[name.trim()] = target;
    else settings.transferTargets[name.trim()] = numberAsWritten(doc, name, target);
  }
  return { settings, problems };
}

/**
 * An unquoted phone number is a YAML integer, which would drop a leading 0
 * or +; the text as written keeps them.
 */
function numberAsWritten(doc: Document, name: string, value: number): string {
  const node = doc.getIn(['transfer_targets', name], true);
  const source = isScalar(node) ? node.source : undefined;
  return source !== undefined && /^\+?[0-9]+$/.test(source) ? source : String(value);
}

function countLines(text: string): number {
  let lines = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines++;
  return lines;
}
