/**
 * YAML files checked by a zod schema, with every problem pointing at the line
 * to fix: people edit these files by hand and read the problems without the
 * schema at hand.
 */
import { isMap, isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';

export interface YamlProblem {
  /** 1-based; undefined when nothing in the file can be pointed at (an empty file). */
  readonly line: number | undefined;
  /** `steps[3].expect.speak`; '' for the file as a whole. */
  readonly path: string;
  readonly message: string;
}

export type YamlParse<T> =
  | {
      readonly data: T;
      /** The line where the value at `path` is written (its parent's when it is missing), for problems found later. */
      readonly lineOf: (path: readonly PropertyKey[]) => number | undefined;
    }
  | {
      readonly problems: readonly YamlProblem[];
      /** What the file holds, unchecked, and where: for problems found beside the schema's. Absent when it is no YAML. */
      readonly unchecked?: { readonly data: unknown; readonly lineOf: (path: readonly PropertyKey[]) => number | undefined };
    };

export interface YamlFileOptions {
  /** How the schema's issues read (e.g. readableIssues); by default zod's own messages, see flattenIssues. */
  describe?: (issues: readonly z.core.$ZodIssue[], data: unknown) => { path: readonly PropertyKey[]; message: string }[];
}

/** Parses YAML text (JSON too) and checks it with `schema`; every problem is collected, not just the first. */
export function parseYamlFile<S extends z.ZodType>(text: string, schema: S, options: YamlFileOptions = {}): YamlParse<z.output<S>> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      problems: doc.errors.map((error) => ({
        line: lineCounter.linePos(error.pos[0]).line || undefined,
        path: '',
        message: `YAML: ${error.message.split('\n')[0] ?? error.message}`,
      })),
    };
  }
  const data: unknown = doc.toJS();
  if (data === null || data === undefined) return { problems: [{ line: undefined, path: '', message: 'the file is empty' }] };
  const parsed = schema.safeParse(data);
  const lineOfPath = (issuePath: readonly PropertyKey[]) => lineOf(doc, lineCounter, issuePath);
  if (parsed.success) return { data: parsed.data, lineOf: lineOfPath };
  const issues = options.describe ? options.describe(parsed.error.issues, data) : flattenIssues(parsed.error.issues);
  return {
    problems: issues.map(({ path: issuePath, message }) => ({
      line: lineOfPath(issuePath),
      path: formatPath(issuePath),
      message,
    })),
    unchecked: { data, lineOf: lineOfPath },
  };
}

/** `line 7: request.method: problem`, the way a problem reads in a list under its file's name. */
export function describeYamlProblem(problem: YamlProblem): string {
  const where = problem.path ? `${problem.path}: ` : '';
  return `${problem.line ? `line ${problem.line}: ` : ''}${where}${problem.message}`;
}

/**
 * Issues as path + message, one per unknown key, so each can point at its own
 * line; a bad key of a mapping says what is wrong with it, not just "Invalid key".
 */
export function flattenIssues(issues: readonly z.core.$ZodIssue[]): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...issue.path, key], message: `unknown key "${key}"` }));
    }
    if (issue.code === 'invalid_key') return issue.issues.map((inner) => ({ path: issue.path, message: inner.message }));
    return [{ path: issue.path, message: issue.message }];
  });
}

/** `steps[3].expect.speak` */
export function formatPath(issuePath: readonly PropertyKey[]): string {
  return issuePath
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

/** The line of the deepest node on the path that exists (a missing key points at its parent). */
function lineOf(doc: Document, lineCounter: LineCounter, issuePath: readonly PropertyKey[]): number | undefined {
  const keys = issuePath.filter((part): part is string | number => typeof part !== 'symbol');
  for (let depth = keys.length; depth >= 0; depth--) {
    const prefix = keys.slice(0, depth);
    const node: unknown = depth === 0 ? doc.contents : doc.getIn(prefix, true);
    const range = isNode(node) ? node.range : undefined;
    if (range) return lineCounter.linePos(keyOffset(doc, prefix) ?? range[0]).line;
  }
  return undefined;
}

/** Where the key of the last path element is written: a null value has no position of its own. */
function keyOffset(doc: Document, keys: readonly (string | number)[]): number | undefined {
  const last = keys.at(-1);
  if (typeof last !== 'string') return undefined;
  const parent: unknown = keys.length === 1 ? doc.contents : doc.getIn(keys.slice(0, -1), true);
  if (!isMap(parent)) return undefined;
  const pair = parent.items.find((item) => isNode(item.key) && 'value' in item.key && item.key.value === last);
  return isNode(pair?.key) ? pair.key.range?.[0] : undefined;
}
