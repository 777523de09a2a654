/**
 * A person's data from the command line: answer an access request (export) or an erasure request
 * (erase), found by their phone number in any written form.
 *
 *   npm run data -- export --number <n> [--out file] | erase --number <n> [--dry-run] [--stop-calling]
 */
import { writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { config as loadDotenv } from 'dotenv';
import { pino } from 'pino';
import { command, endQuietlyWhenOutputCloses, parseCommandLine, UsageError, usageLine, wantsHelp } from '../command-line.js';
import { loadConfig } from '../config.js';
import { ConfigError } from '../errors.js';
import { InvalidPhoneNumberError } from '../phone/errors.js';
import { AuditLog } from '../privacy/audit-log.js';
import { countPersonData, erasePersonData, exportPersonData, PersonDataUnreadableError, type PersonCounts, type PersonDataDeps } from '../privacy/person-data.js';
import { openStore, type Store } from '../store/store.js';
import { isMain } from './is-main.js';

export const USAGE = `Usage: npm run data -- <command> --number <phone number> [options]

A person's data, found by their phone number in any written form (+49 151 1234567, 0049151…,
0151… with DEFAULT_COUNTRY_CODE): the calls they made or took, with their reports, report deliveries
(sent or still waiting) and transcripts, their campaign entries and requested calls. The store and the
transcripts are Hotline's: the shell's environment, then a .env file in the working directory.

Commands:
  export --number <n> [--out file]   everything about the person as one JSON document (an access
                                     request), to the file (default: standard output)
  erase --number <n>                 erases all of it, everywhere; the store keeps only that an erasure
                                     happened and how many of each kind went. Calls still in progress are
                                     left alone (erase again once they have ended)
    --dry-run                        only says what would be erased
    --stop-calling                   also puts the number on the stop list (the person asked not to be
                                     called again); the stop list is never erased

Both are recorded in the audit log as done by "cli:<your user name>".

Example:
  npm run data -- erase --number "+49 151 1234567" --dry-run
  npm run data -- export --number 015112345678 --out access-request.json`;

const DATA = command({
  name: 'data',
  usage: USAGE,
  allowPositionals: true,
  options: { number: { type: 'string' }, out: { type: 'string' }, 'dry-run': { type: 'boolean' }, 'stop-calling': { type: 'boolean' } },
});

const COMMANDS = ['export', 'erase'] as const;
type DataCommand = (typeof COMMANDS)[number];

interface Io {
  readonly stdout: Writable;
  readonly stderr: { write(text: string): boolean };
}

interface Request {
  which: DataCommand;
  number: string;
  out: string | undefined;
  dryRun: boolean;
  stopCalling: boolean;
}

/** Runs the command line; the exit code. */
export async function runDataCli(argv: string[], env: Record<string, string | undefined>, io: Io): Promise<number> {
  let request: Request;
  try {
    const line = parseCommandLine(DATA, argv);
    if (wantsHelp(line)) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    request = requestOf(line.positionals, line.values);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${usageLine('data', error.message)}\n`);
      return 2;
    }
    throw error;
  }

  const config = loadConfig(env);
  const logger = pino({ level: 'warn' }, process.stderr);
  let store: Store;
  try {
    store = await openStore({ databaseFile: config.databaseFile, databaseUrl: config.databaseUrl }, logger);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`data ${request.which}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const deps: PersonDataDeps = { db: store.db, dialect: store.dialect, transcriptsDir: config.transcriptsDir, defaultCountryCode: config.outbound.defaultCountryCode };
  const actor = `cli:${safeUserName()}`;
  const audit = new AuditLog(store.db, logger);
  try {
    if (request.which === 'export') {
      const document = await exportPersonData(deps, request.number);
      const text = `${JSON.stringify(document, null, 2)}\n`;
      if (request.out) await writeFile(path.resolve(request.out), text, { mode: 0o600 });
      else io.stdout.write(text);
      await audit.record({ actor, role: 'admin', action: 'export_person', detail: { calls: document.calls.length } });
      io.stderr.write(`exported ${describe(document.counts)}${request.out ? ` to ${request.out}` : ''}\n`);
      return 0;
    }
    if (request.dryRun) {
      io.stdout.write(`would erase ${describe(await countPersonData(deps, request.number))} (nothing was changed)\n`);
      return 0;
    }
    const result = await erasePersonData(deps, request.number, { actor, stopCalling: request.stopCalling });
    await audit.record({ actor, role: 'admin', action: 'erase_person', detail: { erasure: result.id, calls: result.counts.calls, leftInProgress: result.leftInProgress } });
    io.stdout.write(
      `erased ${describe(result.counts)} (erasure ${result.id})` +
        (result.leftInProgress > 0 ? `; ${result.leftInProgress} call(s) still in progress were left: erase again once they have ended` : '') +
        (result.addedToStopList ? '; the number is on the stop list now' : '') +
        '\n',
    );
    if (result.filesWiped) return 0;
    io.stderr.write(`data erase: the rows are deleted, but may still be in the database's files (${result.wipeProblems?.join('; ')}): erase again to try again\n`);
    return 1;
  } catch (error) {
    if (error instanceof InvalidPhoneNumberError) {
      io.stderr.write(`data ${request.which}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof PersonDataUnreadableError) {
      io.stderr.write(`data ${request.which}: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

function requestOf(positionals: string[], values: { number?: string | undefined; out?: string | undefined; 'dry-run'?: boolean | undefined; 'stop-calling'?: boolean | undefined }): Request {
  const [first, ...rest] = positionals;
  if (first === undefined) throw new UsageError(`say what to do: ${COMMANDS.join(', ')}`);
  if (!(COMMANDS as readonly string[]).includes(first)) throw new UsageError(`unknown command "${first}": use ${COMMANDS.join(', ')}`);
  if (rest.length > 0) throw new UsageError(`unexpected "${rest[0]}" after ${first}`);
  const which = first as DataCommand;
  if (!values.number?.trim()) throw new UsageError(`${which} needs --number, the person's phone number`);
  if (values.out !== undefined && which !== 'export') throw new UsageError('--out goes with export');
  if ((values['dry-run'] || values['stop-calling']) && which !== 'erase') throw new UsageError('--dry-run and --stop-calling go with erase');
  return { which, number: values.number, out: values.out, dryRun: values['dry-run'] ?? false, stopCalling: values['stop-calling'] ?? false };
}

function describe(counts: PersonCounts): string {
  return (
    `${counts.calls} call(s), ${counts.transcripts} transcript(s), ${counts.reports} report(s), ${counts.deliveries} report delivery(ies), ` +
    `${counts.campaignContacts} campaign entry(ies), ${counts.outboundRequests} requested call(s)` +
    (counts.callsInProgress > 0 ? `; ${counts.callsInProgress} call(s) in progress` : '') +
    (counts.refusedRecords > 0 ? `; ${counts.refusedRecords} record(s) the database refused (store journal)` : '') +
    (counts.stopList > 0 ? '; on the stop list (kept)' : '')
  );
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

if (isMain(import.meta.url)) {
  loadDotenv({ quiet: true });
  endQuietlyWhenOutputCloses();
  runDataCli(process.argv.slice(2), process.env, { stdout: process.stdout, stderr: process.stderr }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`data failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
