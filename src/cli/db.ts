/**
 * Hotline's store from the command line: migrate it, see its state, move it between databases.
 *
 *   npm run db -- migrate | status | export [--out file] | import [--in file]
 */
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import path from 'node:path';
import { config as loadDotenv } from 'dotenv';
import { pino } from 'pino';
import { command, endQuietlyWhenOutputCloses, parseCommandLine, UsageError, usageLine, wantsHelp } from '../command-line.js';
import { loadConfig } from '../config.js';
import { ConfigError } from '../errors.js';
import { sql } from 'kysely';
import { openStore, schemaVersion, type Store } from '../store/store.js';
import { exportStore, ImportError, importStore, type TableCounts } from '../store/store-transfer.js';
import { journalBacklog } from '../store/journal-backlog.js';
import { storeJournalRoot } from '../store/store-journal-dir.js';
import { isMain } from './is-main.js';

export const USAGE = `Usage: npm run db -- <command> [options]

Hotline's store: SQLite (DATABASE_FILE, the default) or PostgreSQL (DATABASE_URL), as Hotline has
them: the shell's environment, then a .env file in the working directory.

Commands:
  migrate              brings the database's schema up to this Hotline's (Hotline does this itself at
                       start; under a lock, so running it beside a starting Hotline is safe)
  status               the schema version, the calls, reports, deliveries and campaigns stored, calls
                       still in progress, and the write queue: records journalled in TRANSCRIPTS_DIR that
                       are not yet confirmed in the database, and records it refused (rejected/).
                       Changes nothing
  export [--out file]  every row as JSON lines, to the file or standard output
  import [--in file]   rows of an export, from the file or standard input, into this store; rows already
                       there are kept, so an import cut short can be run again

Moving from SQLite to PostgreSQL (stop Hotline first, so no call ends between the two steps):
  npm run db -- export --out hotline-export.jsonl
  DATABASE_URL=postgres://hotline:secret@db.example.com/hotline npm run db -- import --in hotline-export.jsonl`;

const DB = command({
  name: 'db',
  usage: USAGE,
  allowPositionals: true,
  options: { out: { type: 'string' }, in: { type: 'string' } },
});

const COMMANDS = ['migrate', 'status', 'export', 'import'] as const;
type DbCommand = (typeof COMMANDS)[number];

interface Io {
  readonly stdout: Writable;
  readonly stderr: { write(text: string): boolean };
  readonly stdin: Readable;
}

/** Runs the command line; the exit code. */
export async function runDbCli(argv: string[], env: Record<string, string | undefined>, io: Io): Promise<number> {
  let which: DbCommand;
  let files: { out?: string | undefined; in?: string | undefined };
  try {
    const line = parseCommandLine(DB, argv);
    if (wantsHelp(line)) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const [first, ...rest] = line.positionals;
    if (first === undefined) throw new UsageError(`say what to do: ${COMMANDS.join(', ')}`);
    if (!(COMMANDS as readonly string[]).includes(first)) throw new UsageError(`unknown command "${first}": use ${COMMANDS.join(', ')}`);
    if (rest.length > 0) throw new UsageError(`unexpected "${rest[0]}" after ${first}`);
    which = first as DbCommand;
    if (line.values.out !== undefined && which !== 'export') throw new UsageError('--out goes with export');
    if (line.values.in !== undefined && which !== 'import') throw new UsageError('--in goes with import');
    files = { out: line.values.out, in: line.values.in };
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${usageLine('db', error.message)}\n`);
      return 2;
    }
    throw error;
  }

  let store: Store;
  const config = loadConfig(env);
  // Only warnings: migrations say what they did through the command's own lines.
  const logger = pino({ level: 'warn' }, process.stderr);
  try {
    store = await openStore({ databaseFile: config.databaseFile, databaseUrl: config.databaseUrl }, logger, { migrate: which !== 'status' });
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`db ${which}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  try {
    switch (which) {
      case 'migrate': {
        const { current } = await schemaVersion(store);
        io.stdout.write(`${store.dialect} ${store.where}: schema version ${current}, up to date\n`);
        return 0;
      }
      case 'status':
        io.stdout.write(await status(store, storeJournalRoot(config.transcriptsDir)));
        return 0;
      case 'export': {
        const file = files.out ? createWriteStream(path.resolve(files.out)) : undefined;
        const counts = await exportStore(store, file ?? io.stdout);
        if (file) {
          file.end();
          await finished(file);
        }
        io.stderr.write(`exported from ${store.dialect} ${store.where}: ${describe(counts)}\n`);
        return 0;
      }
      case 'import': {
        const input = files.in ? createReadStream(path.resolve(files.in)) : io.stdin;
        const { read, added } = await importStore(store, input);
        io.stdout.write(`imported into ${store.dialect} ${store.where}: ${describe(added)} (read: ${describe(read)}; rows already there were kept)\n`);
        return 0;
      }
    }
  } catch (error) {
    if (error instanceof ImportError || (error as { code?: unknown }).code === 'ENOENT') {
      io.stderr.write(`db ${which}: ${(error as Error).message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

function describe(counts: TableCounts): string {
  return Object.entries(counts)
    .map(([table, n]) => `${table} ${n}`)
    .join(', ');
}

async function status(store: Store, journalDir: string): Promise<string> {
  const { current, latest } = await schemaVersion(store);
  const lines = [`store: ${store.dialect} ${store.where}`];
  lines.push(
    `schema version: ${current}` +
      (current === latest ? ' (up to date)' : current < latest ? ` (this Hotline brings ${latest}: npm run db -- migrate, or start Hotline)` : ` (newer than this Hotline's ${latest})`),
  );
  if (current === latest) {
    const count = async (query: Promise<{ n: number }[]>): Promise<number> => Number((await query)[0]?.n ?? 0);
    const { db } = store;
    const calls = await count(db.selectFrom('calls').select((eb) => eb.fn.countAll<number>().as('n')).execute());
    const inProgress = await count(db.selectFrom('calls').where('ended_at', 'is', null).select((eb) => eb.fn.countAll<number>().as('n')).execute());
    const reports = await count(db.selectFrom('reports').select((eb) => eb.fn.countAll<number>().as('n')).execute());
    const pending = await count(db.selectFrom('deliveries').where('status', '=', 'pending').select((eb) => eb.fn.countAll<number>().as('n')).execute());
    const failed = await count(db.selectFrom('deliveries').where('status', '=', 'failed').select((eb) => eb.fn.countAll<number>().as('n')).execute());
    const campaigns = await count(db.selectFrom('campaigns').select((eb) => eb.fn.countAll<number>().as('n')).execute());
    const stopped = await count(db.selectFrom('stop_list').select((eb) => eb.fn.countAll<number>().as('n')).execute());
    lines.push(`calls: ${calls} (in progress, or left so by a process that was killed until the next start: ${inProgress}), reports: ${reports}`);
    lines.push(`report deliveries: ${pending} waiting, ${failed} given up`);
    lines.push(`campaigns: ${campaigns}, numbers on the stop list: ${stopped}`);
  }
  const backlog = await journalBacklog(journalDir);
  lines.push(
    `write queue: ${backlog.journalled} call record(s) journalled in ${journalDir} and not yet confirmed in the database` +
      (backlog.rejected > 0 ? `; ${backlog.rejected} refused by the database, kept in the journal's rejected/` : ''),
  );
  // A read that finished proves the database answers.
  await sql`SELECT 1`.execute(store.db);
  return `${lines.join('\n')}\n`;
}

if (isMain(import.meta.url)) {
  loadDotenv({ quiet: true });
  endQuietlyWhenOutputCloses();
  runDbCli(process.argv.slice(2), process.env, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`db failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
