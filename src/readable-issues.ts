/**
 * zod's issues as sentences a person who wrote the file can act on: what the
 * field must be and what was written instead ("concurrency: must be at most
 * 100, not 500"), a union explained by the alternative the value was meant
 * for (a list of calling windows: which window, which field), and an unknown
 * key with the known key it was probably meant to be. zod's own wording
 * ("Invalid input") names neither.
 */
import type { z } from 'zod';

export interface ReadableIssue {
  /** Where in the input: `['calling_hours', 0, 'from']`. */
  readonly path: (string | number)[];
  readonly message: string;
}

type Issue = z.core.$ZodIssue;
type Path = (string | number)[];

/** Every issue as a sentence; `input` is what was checked (to quote the value), `schema` what checked it (to name known keys). */
export function readableIssues(issues: readonly Issue[], input: unknown, schema?: z.core.$ZodType): ReadableIssue[] {
  return issues.flatMap((issue) => explain(issue, [], input, schema));
}

function explain(issue: Issue, base: Path, input: unknown, schema: z.core.$ZodType | undefined): ReadableIssue[] {
  const path = [...base, ...issue.path.filter((part): part is string | number => typeof part !== 'symbol')];
  const value = valueAt(input, path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = schema === undefined ? [] : keysAt(schema, path);
      return issue.keys.map((key) => ({ path: [...path, key], message: unknownKey(key, known) }));
    }
    case 'invalid_union': {
      const branch = intendedBranch(issue.errors);
      if (branch !== undefined) return branch.flatMap((inner) => explain(inner, path, input, schema));
      return [{ path, message: noAlternative(issue, value) }];
    }
    case 'invalid_key':
    case 'invalid_element':
      return issue.issues.flatMap((inner) => explain(inner, path, input, schema));
    default:
      return [{ path, message: ZOD_WORDING.test(issue.message) ? sentence(issue, value) : issue.message }];
  }
}

/**
 * The alternative the value was meant for: one whose type it has (its
 * problems lie deeper than the value itself), the one with fewest problems if
 * several. None when the value has the type of no alternative.
 */
function intendedBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] | undefined {
  const matching = branches.filter((issues) => issues.length > 0 && !issues.every((i) => i.code === 'invalid_type' && i.path.length === 0));
  return matching.sort((a, b) => a.length - b.length)[0];
}

function noAlternative(issue: Extract<Issue, { code: 'invalid_union' }>, value: unknown): string {
  if (issue.message !== 'Invalid input') return `${issue.message}, not ${shown(value)}`;
  const kinds = issue.errors.flatMap((issues) => issues.flatMap((i) => (i.code === 'invalid_type' && i.path.length === 0 ? [kindOf(i.expected)] : [])));
  const unique = [...new Set(kinds)];
  if (unique.length === 0) return `is not valid: ${shown(value)}`;
  if (value === undefined || value === null) return `${value === undefined ? 'is missing' : 'is empty'}; it must be ${alternatives(unique)}`;
  return `must be ${alternatives(unique)}, not ${shown(value)}`;
}

function sentence(issue: Issue, value: unknown): string {
  switch (issue.code) {
    case 'invalid_type': {
      const kind = kindOf(issue.expected);
      if (value === undefined) return `is missing; it must be ${kind}`;
      if (value === null) return `is empty; it must be ${kind}`;
      return `must be ${kind}, not ${shown(value)}`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') return min <= 1 ? 'must not be empty' : `must be at least ${min} characters long`;
      if (issue.origin === 'array' || issue.origin === 'set') return min <= 1 ? 'must not be an empty list' : `must have at least ${min} entries`;
      return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${min}, not ${shown(value)}`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${max} characters long, not ${typeof value === 'string' ? value.length : '?'}`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${max} entries, not ${Array.isArray(value) ? value.length : '?'}`;
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${max}, not ${shown(value)}`;
    }
    case 'invalid_value': {
      const values = issue.values.map((v) => String(v));
      return values.length === 1 ? `must be ${values[0]}, not ${shown(value)}` : `must be one of ${values.join(', ')}, not ${shown(value)}`;
    }
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}, not ${shown(value)}`;
    default:
      // Formats and refinements carry the schema's own message, written for people.
      return issue.message;
  }
}

/** zod's own English wording: anything else is a message the schema wrote for people, and is kept. */
const ZOD_WORDING = /^(Invalid|Too (small|big)|Unrecognized key)/;

function kindOf(expected: string): string {
  switch (expected) {
    case 'string':
      return 'text';
    case 'number':
      return 'a number';
    case 'int':
      return 'a whole number';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'a list';
    case 'object':
    case 'record':
      return 'a mapping (key: value)';
    default:
      return expected;
  }
}

function alternatives(kinds: string[]): string {
  if (kinds.length === 1) return kinds[0]!;
  const listed = kinds.map((kind) => (kind === 'true or false' ? 'true/false' : kind));
  return `${listed.slice(0, -1).join(', ')} or ${listed.at(-1)!}`;
}

/** The value as the writer will recognise it: `"9-17"`, `2.5`, a list, a mapping. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'nothing';
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}

function valueAt(input: unknown, path: Path): unknown {
  let value = input;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[part];
  }
  return value;
}

function unknownKey(key: string, known: readonly string[]): string {
  const meant = closest(key, known);
  if (meant !== undefined) return `unknown key "${key}": did you mean "${meant}"?`;
  return known.length > 0 ? `unknown key "${key}"; the keys here are ${known.join(', ')}` : `unknown key "${key}"`;
}

/** The known key `key` is most likely a typo of: the same but for case, _ and -, or a letter or two apart. */
function closest(key: string, known: readonly string[]): string | undefined {
  const plain = (text: string) => text.toLowerCase().replace(/[_-]/g, '');
  const same = known.find((k) => plain(k) === plain(key));
  if (same !== undefined) return same;
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance <= Math.max(1, Math.floor(candidate.length / 4)) && (best === undefined || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** What zod's own definitions say of a schema, as far as finding an object's keys needs it. */
interface Definition {
  type: string;
  shape?: Record<string, z.core.$ZodType>;
  element?: z.core.$ZodType;
  options?: readonly z.core.$ZodType[];
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
}

/** The keys an object at `path` may have, following the schema down through lists, unions and wrappers. */
function keysAt(schema: z.core.$ZodType, path: Path): string[] {
  const def = schema._zod.def as unknown as Definition;
  const inner = def.innerType ?? def.in;
  if (inner !== undefined) return keysAt(inner, path);
  if (def.type === 'union') {
    for (const option of def.options ?? []) {
      const keys = keysAt(option, path);
      if (keys.length > 0) return keys;
    }
    return [];
  }
  const [head, ...rest] = path;
  if (head === undefined) return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
  const next = def.type === 'object' ? def.shape?.[String(head)] : def.type === 'array' ? def.element : def.type === 'record' ? def.valueType : undefined;
  return next === undefined ? [] : keysAt(next, rest);
}
