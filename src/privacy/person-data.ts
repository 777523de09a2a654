/**
 * Everything Hotline keeps about one person, found by their phone number in whatever form it is
 * written: for an access request (export) and an erasure request (erase). A person is the caller of
 * an inbound call and the one called in an outbound call — never the business's own number, which
 * every inbound call has on its other side.
 *
 * Stored numbers are as the voice service sent them, so candidates are found by their last digits in
 * the database and then compared as phone keys (src/outbound/phone-number.ts).
 */
import { lstat, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { normalizePhoneNumber, phoneKey } from '../phone/phone-number.js';
import type { Db, Dialect } from '../store/schema.js';
import { wipeDeleted } from '../store/wipe-deleted.js';
import { HotlineError } from '../errors.js';
import { readRejected, removeRejected } from '../store/rejected-records.js';
import { storeJournalRoot } from '../store/store-journal-dir.js';

/** The last digits compared in the database; the rest is compared after. */
const TAIL_DIGITS = 6;
/** Rows per IN (…) list: well under every database's limit on parameters. */
const CHUNK = 200;

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

/** The tables an erasure deletes from or overwrites. */
const ERASED_TABLES = ['reports', 'deliveries', 'calls', 'webhook_sessions', 'outbound_requests', 'campaign_contacts'] as const;

/**
 * The tables this erasure changed, to be wiped (a rewrite of each on PostgreSQL). Nothing found: all
 * of them, since erasing again is how a wipe that could not be done is tried again.
 */
function tablesToWipe(counts: PersonCounts): (typeof ERASED_TABLES)[number][] {
  const tables: (typeof ERASED_TABLES)[number][] = [];
  // A call's number was held in outbound_requests while it lasted (a ring, the person on the line): deleted at its end, not wiped.
  if (counts.calls > 0) tables.push('reports', 'deliveries', 'calls', 'webhook_sessions', 'outbound_requests');
  else if (counts.deliveries > 0) tables.push('deliveries');
  if (counts.outboundRequests > 0) tables.push('outbound_requests');
  if (counts.campaignContacts > 0) tables.push('campaign_contacts');
  return tables.length > 0 ? tables : [...ERASED_TABLES];
}

interface Found {
  key: string;
  refused: RefusedRecords[];
  calls: CallRow[];
  reports: Record<string, unknown>[];
  deliveries: Record<string, unknown>[];
  contacts: Record<string, unknown>[];
  outbound: Record<string, unknown>[];
  stopList: Record<string, unknown>[];
  transcriptFiles: string[];
}

type CallRow = Record<string, unknown> & { call_id: string; session_id: string; ended_at: string | null; transcript_file: string };

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
    auditLog: await auditOf(deps.db, found.calls.map((call) => call.session_id)),
  };
}

async function auditOf(db: Db, sessionIds: readonly string[]): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const ids of chunks([...new Set(sessionIds)])) {
    rows.push(...(await db.selectFrom('audit_log').selectAll().where('session_id', 'in', ids).orderBy('at').execute()).map(parsedColumns));
  }
  return rows;
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
  await deps.db.transaction().execute(async (trx) => {
    for (const ids of chunks(callIds)) {
      await trx.deleteFrom('reports').where('call_id', 'in', ids).execute();
      await trx.deleteFrom('deliveries').where('call_id', 'in', ids).execute();
      await trx.deleteFrom('calls').where('call_id', 'in', ids).execute();
    }
    for (const ids of chunks(endedSessions)) {
      await trx.deleteFrom('deliveries').where('session_id', 'in', ids).execute();
      await trx.deleteFrom('webhook_sessions').where('session_id', 'in', ids).execute();
    }
    await trx.deleteFrom('outbound_requests').where('to_number', '=', found.key).execute();
    for (const contact of found.contacts) {
      await trx
        .updateTable('campaign_contacts')
        .set({ number: '', variables: '{}', last_session_id: null, last_error: null, updated_at: now.toISOString() })
        .where('campaign_id', '=', String(contact.campaign_id))
        .where('idx', '=', Number(contact.idx))
        .execute();
    }
    if (options.stopCalling && found.stopList.length === 0) {
      await trx.insertInto('stop_list').values({ number: found.key, reason: 'asked not to be called (erasure)', added_at: now.toISOString() }).execute();
    }
    await trx
      .insertInto('erasures')
      .values({ id, erased_at: now.toISOString(), actor: options.actor, counts: JSON.stringify({ ...counts, callsInProgress: undefined }) })
      .execute();
  });
  // A record file each: removing the person's never races the writer adding others (store/rejected-records.ts).
  for (const journal of found.refused) if (journal.theirs.length > 0) await journalRead(journal.dir, () => removeRejected(journal.dir, journal.isTheirs));
  // Files after the rows: a failure here leaves a file the retention sweep or a second erasure removes, never a row without its file's erasure on record.
  const liveFiles = new Set(found.calls.filter((call) => call.ended_at === null).map((call) => call.transcript_file));
  for (const file of new Set(ended.map((call) => call.transcript_file))) {
    if (liveFiles.has(file) || !inside(deps.transcriptsDir, file)) continue;
    await rm(file, { force: true });
  }
  const wiped = await wipeDeleted(deps.db, deps.dialect, tablesToWipe(counts));
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
  const { db } = deps;
  const tail = `%${key.slice(-TAIL_DIGITS)}`;
  const same = (stored: unknown): boolean => typeof stored === 'string' && phoneKey(stored, { defaultCountryCode: deps.defaultCountryCode }) === key;
  const candidates = await db
    .selectFrom('calls')
    .selectAll()
    .where((eb) => eb.or([eb.and([eb('direction', '=', 'inbound'), eb('from_number', 'like', tail)]), eb.and([eb('direction', '=', 'outbound'), eb('to_number', 'like', tail)])]))
    .execute();
  const calls = (candidates as unknown as CallRow[]).filter((row) => same(row.direction === 'inbound' ? row.from_number : row.to_number));
  const reports: Record<string, unknown>[] = [];
  const deliveries: Record<string, unknown>[] = [];
  for (const part of chunks(calls)) {
    const ids = part.map((call) => call.call_id);
    const sessions = part.map((call) => call.session_id);
    reports.push(...(await db.selectFrom('reports').selectAll().where('call_id', 'in', ids).execute()));
    deliveries.push(
      ...(await db
        .selectFrom('deliveries')
        .selectAll()
        .where((eb) => eb.or([eb('call_id', 'in', ids), eb('session_id', 'in', sessions)]))
        .execute()),
    );
    await yieldToLoop();
  }
  const contacts = (await db.selectFrom('campaign_contacts').selectAll().where('number', 'like', tail).execute()).filter((row) => same(row.number));
  const outbound = (await db.selectFrom('outbound_requests').selectAll().where('to_number', 'like', tail).execute()).filter((row) => same(row.to_number));
  const stopList = (await db.selectFrom('stop_list').selectAll().where('number', 'like', tail).execute()).filter((row) => same(row.number));
  const transcriptFiles = [...new Set(calls.map((call) => call.transcript_file))];
  for (const file of transcriptFiles) await mayBeRead(deps.transcriptsDir, file);
  const refused = await refusedRecords(deps.transcriptsDir, same);
  return { key, refused, calls, reports, deliveries: unique(deliveries, 'id'), contacts, outbound, stopList, transcriptFiles };
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

interface RefusedRecords {
  /** The replica's journal folder. */
  dir: string;
  theirs: Record<string, unknown>[];
  isTheirs: (record: Record<string, unknown>) => boolean;
}

/** Each replica's refused records (store/rejected-records.ts), the person's picked out. */
async function refusedRecords(transcriptsDir: string, same: (stored: unknown) => boolean): Promise<RefusedRecords[]> {
  const root = storeJournalRoot(transcriptsDir);
  const isTheirs = (record: Record<string, unknown>): boolean => {
    const call = record.call as { direction?: unknown; from?: unknown; to?: unknown } | undefined;
    return call !== undefined && same(call.direction === 'outbound' ? call.to : call.from);
  };
  const dirs = await journalRead(root, async () => {
    try {
      return await readdir(root, { withFileTypes: true });
    } catch (error) {
      // No journal yet: no record was ever refused.
      if (codeOf(error) === 'ENOENT') return [];
      throw error;
    }
  });
  const journals: RefusedRecords[] = [];
  for (const entry of dirs) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(root, entry.name);
    const records = await journalRead(dir, () => readRejected(dir));
    journals.push({ dir, theirs: records.flatMap(({ record }) => (record && isTheirs(record) ? [record] : [])), isTheirs });
  }
  return journals;
}

/** Reads (or changes) the store journal; a failure says so, whatever it was. */
async function journalRead<T>(where: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw unreadable(`the store journal ${where} could not be read`, error);
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
async function transcriptLines(row: CallRow): Promise<Record<string, unknown>[] | undefined> {
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

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

function unique(rows: Record<string, unknown>[], key: string): Record<string, unknown>[] {
  const seen = new Set<unknown>();
  return rows.filter((row) => (seen.has(row[key]) ? false : (seen.add(row[key]), true)));
}
