/**
 * Moves a whole store from one database to another (a business that began on SQLite and grows
 * to PostgreSQL): every table's rows as JSON lines, read and written in pages so a store of any
 * size passes through bounded memory, and never holds the event loop for long.
 *
 * The export's first line names what it is; then one line per row, table by table in an order
 * that lets an import insert each row after the rows it refers to. Importing skips rows already
 * there (by primary key), so an import that was cut short can be run again.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { once } from 'node:events';
import { z } from 'zod';
import { callCostUsd } from '../llm/prices.js';
import { TurnSchema } from './call-progress-schema.js';
import type { StoreSchema } from './schema.js';
import { schemaVersion, type Store } from './store.js';

/** Referenced tables before the tables that refer to them. `campaign_tally` is not moved: triggers count it again. */
const TABLES = [
  { name: 'calls', key: ['call_id'] },
  { name: 'reports', key: ['call_id'] },
  { name: 'deliveries', key: ['id'] },
  { name: 'campaigns', key: ['id'] },
  { name: 'campaign_contacts', key: ['campaign_id', 'idx'] },
  { name: 'stop_list', key: ['number'] },
  { name: 'erasures', key: ['id'] },
  { name: 'staff', key: ['name'] },
  { name: 'audit_log', key: ['id'] },
] as const satisfies readonly { name: keyof StoreSchema; key: readonly string[] }[];

type TableName = (typeof TABLES)[number]['name'];
const TABLE_NAMES = TABLES.map((table) => table.name) as [TableName, ...TableName[]];

const PAGE = 500;
export const EXPORT_FORMAT = 'hotline-store-export';

const Header = z.object({ format: z.literal(EXPORT_FORMAT), version: z.literal(1), dialect: z.string(), schema: z.number(), exportedAt: z.string() });
const RowLine = z.object({ table: z.enum(TABLE_NAMES), row: z.record(z.string(), z.unknown()) });

export type TableCounts = Record<TableName, number>;

function emptyCounts(): TableCounts {
  return Object.fromEntries(TABLE_NAMES.map((name) => [name, 0])) as TableCounts;
}

type Row = Record<string, unknown>;

/** Writes the store to `out`; the rows of each table counted. */
export async function exportStore(store: Store, out: Writable): Promise<TableCounts> {
  const counts = emptyCounts();
  const { current } = await schemaVersion(store);
  await write(out, { format: EXPORT_FORMAT, version: 1, dialect: store.dialect, schema: current, exportedAt: new Date().toISOString() });
  for (const table of TABLES) {
    let after: Row | undefined;
    for (;;) {
      const rows: Row[] = await page(store, table.name, table.key, after);
      for (const row of rows) {
        // PostgreSQL's stand-in for SQLite's implicit rowid is numbered again where the rows land.
        delete row.rowid;
        await write(out, { table: table.name, row });
        counts[table.name] += 1;
      }
      if (rows.length < PAGE) break;
      after = rows.at(-1);
    }
  }
  return counts;
}

async function page(store: Store, table: TableName, key: readonly string[], after: Row | undefined): Promise<Row[]> {
  // Keyset paging: each page starts where the last ended, however large the table.
  let query = store.db.selectFrom(table).selectAll();
  if (after) {
    const [first, second] = key as readonly string[];
    query =
      second === undefined
        ? query.where(first as never, '>', after[first!] as never)
        : query.where((eb) =>
            eb.or([
              eb(first as never, '>', after[first!] as never),
              eb.and([eb(first as never, '=', after[first!] as never), eb(second as never, '>', after[second] as never)]),
            ]),
          );
  }
  for (const column of key) query = query.orderBy(column as never);
  return (await query.limit(PAGE).execute()) as Row[];
}

async function write(out: Writable, value: unknown): Promise<void> {
  if (!out.write(`${JSON.stringify(value)}\n`)) await once(out, 'drain');
}

export class ImportError extends Error {}

const StoredTurns = z.array(TurnSchema);

/** A calls row's `turns` (JSON text) priced as callCostUsd in llm/prices.ts does; null when they cannot be read. */
function costOfStoredTurns(turns: unknown): number | null {
  if (typeof turns !== 'string') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(turns);
  } catch {
    return null;
  }
  const checked = StoredTurns.safeParse(parsed);
  return checked.success ? callCostUsd(checked.data) : null;
}

/** Reads an export from `input` into the store; rows already there are kept as they are. */
export async function importStore(store: Store, input: Readable): Promise<{ read: TableCounts; added: TableCounts }> {
  const read = emptyCounts();
  const added = emptyCounts();
  const lines = createInterface({ input, crlfDelay: Infinity });
  let header = false;
  let lineNumber = 0;
  let batch: { table: TableName; rows: Row[] } | undefined;
  const flush = async (): Promise<void> => {
    if (!batch || batch.rows.length === 0) return;
    const { table, rows } = batch;
    batch = undefined;
    const key = TABLES.find((t) => t.name === table)!.key as readonly string[];
    const result = await store.db
      .insertInto(table)
      .values(rows as never)
      .onConflict((oc) => oc.columns(key as never).doNothing())
      .executeTakeFirst();
    added[table] += Number(result.numInsertedOrUpdatedRows ?? 0n);
  };
  for await (const text of lines) {
    lineNumber += 1;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ImportError(`line ${lineNumber} is not JSON: is this a file \`npm run db -- export\` wrote?`);
    }
    if (!header) {
      const parsed = Header.safeParse(value);
      if (!parsed.success) throw new ImportError(`line 1 is not the header of a Hotline store export (${EXPORT_FORMAT})`);
      header = true;
      continue;
    }
    const parsed = RowLine.safeParse(value);
    if (!parsed.success) throw new ImportError(`line ${lineNumber} is not a row of a known table`);
    const { table, row } = parsed.data;
    // The stop list is numbered again here: every campaign checks its waiting contacts against all of it once more.
    if (table === 'campaigns') row.stop_mark = -1;
    // An export made before calls had a cost: worked out from the turns, as the migration does for the calls stored then.
    if (table === 'calls' && !('cost_usd' in row)) row.cost_usd = costOfStoredTurns(row.turns);
    read[table] += 1;
    if (batch && (batch.table !== table || batch.rows.length >= PAGE)) await flush();
    batch ??= { table, rows: [] };
    batch.rows.push(row);
  }
  await flush();
  if (!header) throw new ImportError('the file is empty: nothing to import');
  return { read, added };
}
