import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from './schema.js';

/**
 * The JSON and text functions the history and the charts need, in the SQL of each database: the
 * one place their queries differ. JSON columns are text on both (see schema.ts); PostgreSQL reads
 * them through a cast, SQLite's JSON functions take the text as it is.
 */
export interface JsonSql {
  /** The length of the JSON array held in `column`. */
  arrayLength(column: RawBuilder<unknown>): RawBuilder<number>;
  /** The top-level member `key` of the JSON object in `column`, as text (for members that hold strings). */
  memberText(column: RawBuilder<unknown>, key: string): RawBuilder<string | null>;
  /** The number in the member `key` of the JSON object `value` (a row of `eachElement`); null where there is none. */
  memberNumber(value: RawBuilder<unknown>, key: string): RawBuilder<number | null>;
  /** A FROM item: each element of the JSON array in `column`, as `alias.value`. */
  eachElement(column: RawBuilder<unknown>, alias: string): RawBuilder<unknown>;
  /** A FROM item: each key of the JSON object in `column`, as `alias.key`. */
  eachKey(column: RawBuilder<unknown>, alias: string): RawBuilder<unknown>;
  /** `column` holds `words` as they are (no wildcards), letters in either case. */
  containsWords(column: RawBuilder<unknown>, words: string): RawBuilder<boolean>;
  /**
   * The member `name` of the JSON object in `column` holds `value`: "true"/"false" match booleans,
   * a number matches the number or the text, anything else the text.
   */
  memberEquals(column: RawBuilder<unknown>, name: string, value: string): RawBuilder<boolean>;
}

/** `words` for LIKE: % and _ in them are not wildcards (escaped with \). */
function likePattern(words: string): string {
  return `%${words.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function numeric(value: string): boolean {
  return value.trim() !== '' && Number.isFinite(Number(value));
}

const SQLITE: JsonSql = {
  arrayLength: (column) => sql<number>`json_array_length(${column})`,
  memberText: (column, key) => sql<string | null>`json_extract(${column}, ${`$.${key}`})`,
  memberNumber: (value, key) => sql<number | null>`json_extract(${value}, ${`$.${key}`})`,
  eachElement: (column, alias) => sql`json_each(${column}) ${sql.id(alias)}`,
  eachKey: (column, alias) => sql`json_each(${column}) ${sql.id(alias)}`,
  // SQLite's LIKE ignores the case of ASCII letters only.
  containsWords: (column, words) => sql<boolean>`${column} LIKE ${likePattern(words)} ESCAPE '\\'`,
  memberEquals(column, name, value) {
    // json_extract gives booleans as 1 and 0, numbers as numbers, strings as text: "4711" is the
    // number 4711 or the text "4711", whichever the field holds (and "true" also the number 1:
    // SQLite has no boolean to tell them apart).
    const typed: string | number = value === 'true' ? 1 : value === 'false' ? 0 : numeric(value) ? Number(value) : value;
    return sql<boolean>`json_extract(${column}, ${`$.${name}`}) IN (${typed}, ${value})`;
  },
};

const POSTGRES: JsonSql = {
  arrayLength: (column) => sql<number>`json_array_length(${column}::json)`,
  memberText: (column, key) => sql<string | null>`(${column}::json ->> ${key}::text)`,
  // float8 as SQLite's REAL: JSON numbers are doubles, and pg hands float8 back as a JS number.
  memberNumber: (value, key) => sql<number | null>`(${value} ->> ${key}::text)::float8`,
  eachElement: (column, alias) => sql`json_array_elements(${column}::json) AS ${sql.id(alias)}(value)`,
  eachKey: (column, alias) => sql`json_object_keys(${column}::json) AS ${sql.id(alias)}(key)`,
  // ILIKE: the case of every letter the database's locale knows, not only ASCII's.
  containsWords: (column, words) => sql<boolean>`${column} ILIKE ${likePattern(words)} ESCAPE '\\'`,
  memberEquals(column, name, value) {
    // jsonb equality: booleans with booleans, numbers by value (4711 = 4711.0), strings as text.
    const typed = value === 'true' || value === 'false' ? value : numeric(value) ? JSON.stringify(Number(value)) : JSON.stringify(value);
    return sql<boolean>`(${column}::jsonb -> ${name}::text) IN (${typed}::jsonb, ${JSON.stringify(value)}::jsonb)`;
  },
};

export function jsonSql(dialect: Dialect): JsonSql {
  return dialect === 'sqlite' ? SQLITE : POSTGRES;
}
