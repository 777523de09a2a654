import { HotlineError } from '../errors.js';

/**
 * Placeholders in prompt files: `{{name}}` and `{{name|default}}`.
 *
 * A template is parsed once, when its file is loaded, into literal and
 * placeholder parts, so that rendering for a call is a single pass that joins
 * strings: nothing is parsed while a caller waits.
 */

export const PLACEHOLDER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

export type TemplatePart =
  | { readonly kind: 'literal'; readonly text: string }
  | {
      readonly kind: 'placeholder';
      readonly name: string;
      /** Undefined when the placeholder has no `|`; may be '' (`{{topic|}}`). */
      readonly defaultValue: string | undefined;
      /** 1-based position of the `{{` in the file, for problem reports. */
      readonly line: number;
      readonly column: number;
    };

export type PlaceholderPart = Extract<TemplatePart, { kind: 'placeholder' }>;

export type TemplateVariables = Readonly<Record<string, string | undefined>>;

export interface TemplateSyntaxIssue {
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

export class TemplateSyntaxError extends HotlineError {
  readonly code = 'template_syntax';
  constructor(readonly issues: readonly TemplateSyntaxIssue[]) {
    super(issues.map((i) => `line ${i.line}, column ${i.column}: ${i.message}`).join('; '));
  }
}

export class Template {
  /** Placeholder names in order of first use, each once. */
  readonly placeholders: readonly string[];

  constructor(readonly parts: readonly TemplatePart[]) {
    this.placeholders = Object.freeze([...new Set(placeholderParts(parts).map((p) => p.name))]);
    Object.freeze(this);
  }

  /**
   * A value that is missing or blank falls back to the placeholder's default;
   * without one the placeholder renders '' and `onMissing` is told, because a
   * prompt must never make a call fail.
   */
  render(vars: TemplateVariables, onMissing?: (name: string) => void): string {
    const lookup = new VariableLookup(vars);
    let out = '';
    for (const part of this.parts) {
      if (part.kind === 'literal') {
        out += part.text;
        continue;
      }
      const value = lookup.get(part.name);
      if (value !== undefined) out += value;
      else if (part.defaultValue !== undefined) out += part.defaultValue;
      else onMissing?.(part.name);
    }
    return out;
  }

  /** True if `render(vars)` would leave a placeholder with neither value nor default. */
  wouldLeaveEmpty(vars: TemplateVariables): boolean {
    const lookup = new VariableLookup(vars);
    return placeholderParts(this.parts).some((p) => p.defaultValue === undefined && lookup.get(p.name) === undefined);
  }
}

function placeholderParts(parts: readonly TemplatePart[]): PlaceholderPart[] {
  return parts.filter((p): p is PlaceholderPart => p.kind === 'placeholder');
}

/**
 * Exact names first; a case-insensitive match only as a fallback, so that
 * `{{Name}}` still finds a request's `name`. The lower-cased index is built
 * only when an exact lookup misses.
 */
class VariableLookup {
  private folded: Map<string, string> | undefined;

  constructor(private readonly vars: TemplateVariables) {}

  get(name: string): string | undefined {
    const exact = Object.hasOwn(this.vars, name) ? this.vars[name] : undefined;
    if (isPresent(exact)) return exact;
    this.folded ??= this.fold();
    return this.folded.get(name.toLowerCase());
  }

  private fold(): Map<string, string> {
    const folded = new Map<string, string>();
    for (const [key, value] of Object.entries(this.vars)) {
      const lower = key.toLowerCase();
      if (isPresent(value) && !folded.has(lower)) folded.set(lower, value);
    }
    return folded;
  }
}

/** A blank value would speak as a hole, exactly like a missing one. */
function isPresent(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/**
 * Parses `source`. All syntax problems are collected, not just the first, so
 * that one run of prompts:check shows everything to fix.
 * `firstLine` is the file line `source` starts on (after front matter).
 */
export function compileTemplate(source: string, options: { firstLine?: number } = {}): Template {
  const position = positionFinder(source, options.firstLine ?? 1);
  const parts: TemplatePart[] = [];
  const issues: TemplateSyntaxIssue[] = [];
  let literalStart = 0;
  let cursor = 0;
  const pushLiteral = (end: number): void => {
    if (end > literalStart) parts.push({ kind: 'literal', text: source.slice(literalStart, end) });
  };

  for (;;) {
    const open = source.indexOf('{{', cursor);
    if (open < 0) break;
    const close = source.indexOf('}}', open + 2);
    const inner = close < 0 ? '' : source.slice(open + 2, close);
    // A placeholder never spans lines or contains another `{{`: either means a `}}` was forgotten.
    if (close < 0 || inner.includes('{{') || inner.includes('\n')) {
      issues.push({ message: 'unclosed "{{": a placeholder needs "}}" on the same line', ...position(open) });
      cursor = open + 2;
      continue;
    }
    const bar = inner.indexOf('|');
    const name = (bar < 0 ? inner : inner.slice(0, bar)).trim();
    if (name === '') {
      issues.push({ message: 'placeholder without a name', ...position(open) });
    } else if (!PLACEHOLDER_NAME.test(name)) {
      issues.push({
        message: `invalid placeholder name "${name}": use letters, digits, _ . - and start with a letter or _`,
        ...position(open),
      });
    } else {
      pushLiteral(open);
      parts.push({
        kind: 'placeholder',
        name,
        defaultValue: bar < 0 ? undefined : inner.slice(bar + 1).trim(),
        ...position(open),
      });
      literalStart = close + 2;
    }
    cursor = close + 2;
  }
  pushLiteral(source.length);
  if (issues.length > 0) throw new TemplateSyntaxError(issues);
  return new Template(Object.freeze(parts));
}

/** Offsets to 1-based line and column; offsets must be asked for in increasing order. */
function positionFinder(source: string, firstLine: number): (offset: number) => { line: number; column: number } {
  let line = firstLine;
  let lineStart = 0;
  let scanned = 0;
  return (offset) => {
    for (; scanned < offset; scanned++) {
      if (source.charCodeAt(scanned) === 10) {
        line++;
        lineStart = scanned + 1;
      }
    }
    return { line, column: offset - lineStart + 1 };
  };
}
