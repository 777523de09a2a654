/**
 * Everything Hotline keeps about one person, found by their phone number in whatever form it is
 * written: for an access request (export) and an erasure request (erase). A person is the caller of
 * an inbound call and the one called in an outbound call — never the business's own number, which
 * every inbound call has on its other side.
 *
 * Stored numbers are as the voice service sent them, so candidates are found by their last digits in
 * the database and then compared as phone keys (src/phone/phone-number.ts). The store reads and
 * deletes the rows (store/person-records.ts); what is the person's, and what the answer says, is here.
 */
import { lstat, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { normalizePhoneNumber, phoneKey } from '../phone/phone-number.js';
import type { Db, Dialect } from '../store/schema.js';
import { HotlineError } from '../errors.js';
import { JournalUnreadableError, PersonRecords, type IsTheirs, type PersonCall, type PersonRows, type RefusedRecords } from '../store/person-records.js';
import { storeJournalRoot } from '../store/store-journal-dir.js';

export interface PersonDataDeps {
  db: Db;
  /** What an erasure deleted is wiped from the database's files each database's own way (store/wipe-deleted.ts). */
  dialect: Dialect;
  /** Transcript files are only ever removed from inside this folder. */
  transcriptsDir: string;
  defaultCountryCode?: string | undefined;
  now?: () => Date;
}

/** What a person's data amounts to, kind by kind: what an erasure keeps as its only trace. */
export interface PersonCounts {
  calls: number;
  callsInProgress: number;
  transcripts: number;
  reports: number;
  deliveries: number;
  campaignContacts: number;
  outboundRequests: number;
  stopList: number;
  /** Call records the database refused, kept in the store journal (store/rejected-records.ts) for someone to look at. */
  refusedRecords: number;
}

export interface PersonExport {
  /** The number as Hotline compares it: E.164 digits. */
  number: string;
  exportedAt: string;
  counts: PersonCounts;
  calls: ExportedCall[];
  campaignContacts: Record<string, unknown>[];
  outboundRequests: Record<string, unknown>[];
  stopList: Record<string, unknown>[];
  /** Call records the database refused (each replica's, in the store journal). */
  refusedRecords: Record<string, unknown>[];
  /** What staff did with these calls (the audit log's entries naming them). */
  auditLog: Record<string, unknown>[];
}

export interface ExportedCall {
  call: Record<string, unknown>;
  report: Record<string, unknown> | undefined;
  deliveries: Record<string, unknown>[];
  /** The transcript file's lines, as written. */
  transcript: Record<string, unknown>[];
  /** The call's transcript file is not there (the retention sweep removed it, or nothing was written). */
  transcriptMissing: boolean;
}

/**
 * Something that may hold the person's data could not be read: the request is not answered, since
 * an answer without it would say "nothing there" where there may be something. Nothing was changed.
 */
export class PersonDataUnreadableError extends HotlineError {
  readonly code = 'person_data_unreadable';
}

export interface ErasureResult {
  id: string;
  erasedAt: string;
  counts: PersonCounts;
  /** Calls still in progress are left alone: erase again once they have ended. */
  leftInProgress: number;
  addedToStopList: boolean;
  /**
   * Whether what was deleted is gone from the database's files too, not only from its tables; when
   * not, `wipeProblems` says why (erase again to try again).
   */
  filesWiped: boolean;
  wipeProblems?: readonly string[];
}

/** The person's rows in the store, their refused records and transcript files. */
interface Found extends PersonRows {
  key: string;
  /** Whether a number, as stored, is theirs. */
  isTheirs: IsTheirs;
  refused: RefusedRecords[];
  transcriptFiles: string[];
}

/** The store's rows of people, for these deps. */
function recordsOf(deps: PersonDataDeps): PersonRecords {
  return new PersonRecords(deps.db, deps.dialect, storeJournalRoot(deps.transcriptsDir));
}

/** The number an operator typed, as Hotline compares numbers; a clear error if it is none. */
export function personKey(number: string, defaultCountryCode?: string): string {
  return normalizePhoneNumber(number, { defaultCountryCode });
}

export async function countPersonData(deps: PersonDataDeps, number: string): Promise<PersonCounts> {
  return countsOf(await find(deps, personKey(number, deps.defaultCountryCode)));
}

export async function exportPersonData(deps: PersonDataDeps, number: string): Promise<PersonExport> {
  const found = await find(deps, personKey(number, deps.defaultCountryCode));
  const reportsByCall = new Map(found.reports.map((report) => [String(report.call_id), report]));
  const calls: ExportedCall[] = [];
  for (const row of found.calls) {
    const transcript = await transcriptLines(row);
    calls.push({
      call: parsedColumns(row),
      report: reportsByCall.has(row.call_id) ? parsedColumns(reportsByCall.get(row.call_id)!) : undefined,
      deliveries: found.deliveries.filter((d) => d.call_id === row.call_id || d.session_id === row.session_id).map(parsedColumns),
      transcript: transcript ?? [],
      transcriptMissing: transcript === undefined,
    });
  }
  return {
    number: found.key,
    exportedAt: (deps.now?.() ?? new Date()).toISOString(),
    counts: countsOf(found),
    calls,
    campaignContacts: found.contacts.map(parsedColumns),
    outboundRequests: found.outbound.map(parsedColumns),
    stopList: found.stopList,
    refusedRecords: found.refused.flatMap((journal) => journal.theirs),
    auditLog: (await recordsOf(deps).audit(found.calls.map((call) => call.session_id))).map(parsedColumns),
  };
}

/**
 * Removes the person's calls (ended ones), their reports, deliveries (sent or still to be sent) and
 * transcripts, their outbound requests, and their number and variables from campaign lists (the
 * contact's outcome stays in the campaign's anonymous counts). The stop list keeps the number: it is
 * the person's wish not to be called, and `stopCalling` adds it there.
 */
export async function erasePersonData(
  deps: PersonDataDeps,
  number: string,
  options: { actor: string; stopCalling?: boolean },
): Promise<ErasureResult> {
  const found = await find(deps, personKey(number, deps.defaultCountryCode));
  const now = deps.now?.() ?? new Date();
  const ended = found.calls.filter((call) => call.ended_at !== null);
  const callIds = ended.map((call) => call.call_id);
  const sessionIds = ended.map((call) => call.session_id);
  // A session still going on in another call of the same session keeps its deliveries and webhook row.
  const liveSessions = new Set(found.calls.filter((call) => call.ended_at === null).map((call) => call.session_id));
  const endedSessions = sessionIds.filter((id) => !liveSessions.has(id));
  const counts = countsOf(found);
  const id = randomUUID();
  const records = recordsOf(deps);
  // One transaction: the rows go all together, with the erasure's record, or none does.
  await records.erase({
    callIds,
    endedSessions,
    number: found.key,
    contacts: found.contacts,
    stopList: options.stopCalling && found.stopList.length === 0 ? { reason: 'asked not to be called (erasure)' } : undefined,
    record: { id, erasedAt: now.toISOString(), actor: options.actor, counts: { ...counts, callsInProgress: undefined } },
  });
  // A record file each: removing the person's never races the writer adding others (store/rejected-records.ts).
  for (const journal of found.refused) if (journal.theirs.length > 0) await journalRead(() => records.removeRefused(journal.dir, found.isTheirs));
  // Files after the rows: a failure here leaves a file the retention sweep or a second erasure removes, never a row without its file's erasure on record.
  const liveFiles = new Set(found.calls.filter((call) => call.ended_at === null).map((call) => call.transcript_file));
  for (const file of new Set(ended.map((call) => call.transcript_file))) {
    if (liveFiles.has(file) || !inside(deps.transcriptsDir, file)) continue;
    await rm(file, { force: true });
  }
  const wiped = await records.wipeErased(counts);
  return {
    id,
    erasedAt: now.toISOString(),
    counts,
    leftInProgress: found.calls.length - ended.length,
    addedToStopList: Boolean(options.stopCalling && found.stopList.length === 0),
    filesWiped: wiped.complete,
    ...(!wiped.complete && { wipeProblems: wiped.problems }),
  };
}

async function find(deps: PersonDataDeps, key: string): Promise<Found> {
  const records = recordsOf(deps);
  // The person's: a number that is theirs once compared as Hotline compares numbers, in whatever form it was stored.
  const isTheirs = (stored: unknown): boolean => typeof stored === 'string' && phoneKey(stored, { defaultCountryCode: deps.defaultCountryCode }) === key;
  const rows = await records.read(key, isTheirs);
  const transcriptFiles = [...new Set(rows.calls.map((call) => call.transcript_file))];
  for (const file of transcriptFiles) await mayBeRead(deps.transcriptsDir, file);
  const refused = await journalRead(() => records.refused(isTheirs));
  return { ...rows, key, isTheirs, refused, transcriptFiles };
}

/**
 * A transcript file is read and removed only inside the transcripts folder (its name comes from the
 * database), and only if it is a file. One that is there but outside (TRANSCRIPTS_DIR was moved
 * since), or is no file, stops the request before anything is read or changed: it would go
 * unreported, and survive an erasure. One not there at all holds nothing.
 */
async function mayBeRead(dir: string, file: string): Promise<void> {
  let stats;
  try {
    stats = await lstat(file);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return;
    throw unreadable(`a call's transcript ${file} could not be looked at`, error);
  }
  if (!inside(dir, file)) {
    throw new PersonDataUnreadableError(
      `a call's transcript ${file} is outside TRANSCRIPTS_DIR (${path.resolve(dir)}), where requests read and erase: move it there, or set TRANSCRIPTS_DIR to its folder, and ask again`,
    );
  }
  if (!stats.isFile()) throw new PersonDataUnreadableError(`a call's transcript ${file} is not a file: the request was not answered, and nothing was changed; fix it and ask again`);
}

function countsOf(found: Found): PersonCounts {
  return {
    calls: found.calls.filter((call) => call.ended_at !== null).length,
    callsInProgress: found.calls.filter((call) => call.ended_at === null).length,
    transcripts: found.transcriptFiles.length,
    reports: found.reports.length,
    deliveries: found.deliveries.length,
    campaignContacts: found.contacts.length,
    outboundRequests: found.outbound.length,
    stopList: found.stopList.length,
    refusedRecords: found.refused.reduce((sum, file) => sum + file.theirs.length, 0),
  };
}

/** Reads (or changes) the store journal through the store; a failure says where, whatever it was. */
async function journalRead<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof JournalUnreadableError) throw unreadable(error.message, error.cause);
    throw error;
  }
}

function unreadable(what: string, error: unknown): PersonDataUnreadableError {
  return new PersonDataUnreadableError(`${what} (${codeOf(error) ?? (error instanceof Error ? error.message : String(error))}): the request was not answered, and nothing was changed; fix it and ask again`, {
    cause: error,
  });
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** JSON columns (text in the row) as the values they hold, for a document a person can read. */
function parsedColumns(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row)) {
    if (typeof value === 'string' && (value.startsWith('{') || value.startsWith('['))) {
      try {
        out[name] = JSON.parse(value) as unknown;
        continue;
      } catch {
        // Text that only looks like JSON stays text.
      }
    }
    out[name] = value;
  }
  return out;
}

/** A call's transcript lines, as written; undefined when its file is not there. Checked to be inside the folder by find(). */
async function transcriptLines(row: PersonCall): Promise<Record<string, unknown>[] | undefined> {
  let text: string;
  try {
    text = await readFile(row.transcript_file, 'utf8');
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined;
    throw unreadable(`the transcript of call ${row.call_id} could not be read`, error);
  }
  const lines: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      lines.push({ unreadable: line });
    }
  }
  return lines;
}

function inside(dir: string, file: string): boolean {
  const relative = path.relative(path.resolve(dir), path.resolve(file));
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}
