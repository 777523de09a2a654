/**
 * The configuration reference: every variable Hotline and its tools read, with its section, what it does
 * and its default, gathered from the schema's entries (src/config-*.ts) and from src/config-elsewhere.ts.
 * `npm run config:docs` writes docs/configuration.md and .env.example from it; test/config-reference.test.ts
 * holds it to the code.
 */
import path from 'node:path';
import { z } from 'zod';
import { EnvSchema } from './config.js';
import { ELSEWHERE } from './config-elsewhere.js';
import { SECTIONS, variableDocs, type SectionId, type VariableDoc } from './config-sections.js';

export interface ReferenceEntry {
  name: string;
  section: SectionId;
  /** What it does, as one paragraph. */
  doc: string;
  /** The default the schema applies, as a person writes it; undefined when it has none. */
  default: string | undefined;
  /** What unset means, in words, when the code works that out rather than the schema. */
  unsetMeans: string | undefined;
  example: string | undefined;
  /** Who reads a variable outside the schema; undefined for the schema's own. */
  readBy: string | undefined;
}

/** A schema entry that cannot be described as it is: the reference would be wrong or incomplete. */
export class ConfigReferenceError extends Error {
  override name = 'ConfigReferenceError';
}

const projectRoot = path.resolve(import.meta.dirname, '..');

/** The value `.default()` gives, before any transform; undefined when the schema has none. */
function schemaDefault(schema: z.ZodType): unknown {
  if (schema instanceof z.ZodDefault) return schema.def.defaultValue;
  // A default followed by a transform (booleans, lists) is a pipe whose input holds the default.
  if (schema instanceof z.ZodPipe) return schemaDefault(schema.def.in as z.ZodType);
  return undefined;
}

/** A default as written in .env: paths under the project as ./relative ones, so the files are the same on every checkout. */
function spelled(value: unknown): string {
  if (typeof value === 'string' && value.startsWith(projectRoot + path.sep)) return `./${path.relative(projectRoot, value).split(path.sep).join('/')}`;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ConfigReferenceError(`a default of type ${typeof value} cannot be written in .env`);
}

/** Source line breaks and indentation are not the text's. */
const oneParagraph = (text: string): string => text.replace(/\s+/g, ' ').trim();

function entryOf(name: string, doc: VariableDoc, schemaValue: unknown, readBy: string | undefined): ReferenceEntry {
  const hasDefault = schemaValue !== undefined;
  if (hasDefault && doc.unsetMeans !== undefined) {
    throw new ConfigReferenceError(`${name}: the schema has a default, so unsetMeans would say it a second time`);
  }
  if (!hasDefault && doc.defaultSpelled !== undefined) throw new ConfigReferenceError(`${name}: defaultSpelled without a schema default`);
  return {
    name,
    section: doc.section,
    doc: oneParagraph(doc.doc),
    default: hasDefault ? (doc.defaultSpelled ?? spelled(schemaValue)) : undefined,
    unsetMeans: doc.unsetMeans === undefined ? undefined : oneParagraph(doc.unsetMeans),
    example: doc.example,
    readBy,
  };
}

/** Every variable, by section in SECTIONS' order; within one, the schema's order, then the others'. */
export function configReference(): ReferenceEntry[] {
  const entries: ReferenceEntry[] = [];
  const seen = new Set<z.ZodType>();
  for (const [name, schema] of Object.entries(EnvSchema.shape) as [string, z.ZodType][]) {
    // The registry is keyed by schema object: one object under two names would describe both as one.
    if (seen.has(schema)) throw new ConfigReferenceError(`${name} shares its schema object with another variable; give it its own`);
    seen.add(schema);
    const doc = variableDocs.get(schema);
    if (!doc) throw new ConfigReferenceError(`${name} has no description: end its schema entry with .register(variableDocs, {...})`);
    entries.push(entryOf(name, doc, schemaDefault(schema), undefined));
  }
  for (const [name, doc] of Object.entries(ELSEWHERE)) {
    if (name in EnvSchema.shape) throw new ConfigReferenceError(`${name} is in the schema and in config-elsewhere.ts: describe it once`);
    entries.push(entryOf(name, doc, undefined, doc.readBy));
  }
  const order = Object.keys(SECTIONS);
  return entries.map((entry, index) => ({ entry, index })).sort((a, b) => order.indexOf(a.entry.section) - order.indexOf(b.entry.section) || a.index - b.index).map(({ entry }) => entry);
}
