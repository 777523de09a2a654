/**
 * The rows of one person across the store: their calls with the reports and deliveries of those
 * calls, their entries in campaign lists, their outbound requests, their stop-list entry, the audit
 * log's entries naming their calls, and the call records the database refused (kept in each
 * replica's journal, store/rejected-records.ts). Read for an access request, deleted for an erasure
 * (privacy/person-data.ts, which says what a person's data is and answers for it).
 *
 * Where each table holds the person's number is known here: the caller's of an inbound call, the one
 * called of an outbound call, a campaign contact's, an outbound request's, a stop-list entry's.
 * Whether a number is the person's is the caller's to say (`isTheirs`): stored numbers are as the
 * voice service sent them, so candidates are found by their last digits in the database, and each
 * candidate's number is then put to `isTheirs`.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { CallsTable, CampaignContactsTable, Db, Dialect, StoreSchema } from './schema.js';
import { readRejected, removeRejected } from './rejected-records.js';
import { wipeDeleted, type Wiped } from './wipe-deleted.js';

/** The last digits compared in the database; the rest is compared after, by `isTheirs`. */
const TAIL_DIGITS = 6;
/** Rows per IN (…) list: well under every database's limit on parameters. */
const CHUNK = 200;

/** Whether a number, as stored, is the person's. */
export type IsTheirs = (stored: unknown) => boolean;

/** A row as stored, every column of it: what an access request shows. */
export type StoredRow = Record<string, unknown>;

/** One of the person's calls, with the columns an erasure goes by. */
export type PersonCall = StoredRow & Pick<CallsTable, 'call_id' | 'session_id' | 'direction' | 'from_number' | 'to_number' | 'ended_at' | 'transcript_file'>;

/** The person's entry in a campaign's list. */
export type PersonContact = StoredRow & Pick<CampaignContactsTable, 'campaign_id' | 'idx' | 'number'>;

/** The person's rows in the database's tables. */
export interface PersonRows {
  calls: PersonCall[];
  /** The reports of their calls. */
  reports: StoredRow[];
  /** The deliveries of their calls or of those calls' sessions, each once. */
  deliveries: StoredRow[];
  contacts: PersonContact[];
  outbound: StoredRow[];
  stopList: StoredRow[];
}

/** One replica's journal folder, and the person's records among those the database refused. */
export interface RefusedRecords {
  dir: string;
  theirs: Record<string, unknown>[];
}

/** The store journal (a folder, or a file in it) could not be read or changed; `cause` says why. */
export class JournalUnreadableError extends Error {
  constructor(
    readonly where: string,
    cause: unknown,
  ) {
    super(`the store journal ${where} could not be read`, { cause });
    this.name = 'JournalUnreadableError';
  }
}

/** What an erasure deletes and overwrites, in one transaction. */
export interface PersonErasure {
  /** The person's ended calls: their rows, reports and deliveries go. */
  callIds: readonly string[];
  /** Their sessions with no call still going on: the deliveries and webhook rows of these go too. */
  endedSessions: readonly string[];
  /** Their number as the outbound requests hold it: those requests go. */
  number: string;
  /** Their entries in campaign lists: number, variables and last session and error blanked; the outcome stays. */
  contacts: readonly Pick<PersonContact, 'campaign_id' | 'idx'>[];
  /** The number is added to the stop list, for this reason; undefined: the stop list is left as it is. */
  stopList: { reason: string } | undefined;
  /** The erasure's own record: when (also the time of every row it changes), by whom, how much of each kind; never whose. */
  record: { id: string; erasedAt: string; actor: string; counts: Readonly<Record<string, number | undefined>> };
}

/** How much an erasure changed, by the kinds that decide which tables are wiped after it. */
export interface ErasedAmounts {
  calls: number;
  deliveries: number;
  outboundRequests: number;
  campaignContacts: number;
}

/** The tables an erasure deletes from or overwrites. */
const ERASED_TABLES = ['reports', 'deliveries', 'calls', 'webhook_sessions', 'outbound_requests', 'campaign_contacts'] as const satisfies readonly (keyof StoreSchema)[];

export class PersonRecords {
  constructor(
    private readonly db: Db,
    /** What an erasure deleted is wiped from the database's files each database's own way (wipe-deleted.ts). */
    private readonly dialect: Dialect,
    /** The store journal's root (store-journal-dir.ts): every replica's folder in it is searched. */
    private readonly journalRoot: string,
  ) {}

  /** The person's rows whose number ends in the last digits of `number`, and that `isTheirs`. */
  async read(number: string, isTheirs: IsTheirs): Promise<PersonRows> {
    const { db } = this;
    const tail = `%${number.slice(-TAIL_DIGITS)}`;
    const candidates = await db
      .selectFrom('calls')
      .selectAll()
      .where((eb) => eb.or([eb.and([eb('direction', '=', 'inbound'), eb('from_number', 'like', tail)]), eb.and([eb('direction', '=', 'outbound'), eb('to_number', 'like', tail)])]))
      .execute();
    const calls = (candidates as unknown as PersonCall[]).filter((row) => isTheirs(row.direction === 'inbound' ? row.from_number : row.to_number));
    const reports: StoredRow[] = [];
    const deliveries: StoredRow[] = [];
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
    const contacts = (await db.selectFrom('campaign_contacts').selectAll().where('number', 'like', tail).execute()).filter((row) => isTheirs(row.number));
    const outbound = (await db.selectFrom('outbound_requests').selectAll().where('to_number', 'like', tail).execute()).filter((row) => isTheirs(row.to_number));
    const stopList = (await db.selectFrom('stop_list').selectAll().where('number', 'like', tail).execute()).filter((row) => isTheirs(row.number));
    return { calls, reports, deliveries: unique(deliveries, 'id'), contacts, outbound, stopList };
  }

  /** What staff did with these sessions' calls: the audit log's entries naming them, oldest first. */
  async audit(sessionIds: readonly string[]): Promise<StoredRow[]> {
    const rows: StoredRow[] = [];
    for (const ids of chunks([...new Set(sessionIds)])) {
      rows.push(...(await this.db.selectFrom('audit_log').selectAll().where('session_id', 'in', ids).orderBy('at').execute()));
    }
    return rows;
  }

  /**
   * Each replica's refused records, the person's picked out: the caller's of an inbound call's
   * record, the one called of an outbound call's. Rejects with JournalUnreadableError when a folder
   * or record cannot be read: what it holds would otherwise go unreported.
   */
  async refused(isTheirs: IsTheirs): Promise<RefusedRecords[]> {
    const root = this.journalRoot;
    const picks = recordPicker(isTheirs);
    const dirs = await journal(root, async () => {
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
      const records = await journal(dir, () => readRejected(dir));
      journals.push({ dir, theirs: records.flatMap(({ record }) => (record && picks(record) ? [record] : [])) });
    }
    return journals;
  }

  /**
   * Removes the person's refused records from one replica's journal folder: a record file each, so
   * removing theirs never races the call writer adding others (rejected-records.ts).
   */
  async removeRefused(dir: string, isTheirs: IsTheirs): Promise<void> {
    await journal(dir, () => removeRejected(dir, recordPicker(isTheirs)));
  }

  /** Deletes and overwrites the person's rows, and records the erasure, all in one transaction. */
  async erase(erasure: PersonErasure): Promise<void> {
    const { record } = erasure;
    await this.db.transaction().execute(async (trx) => {
      for (const ids of chunks(erasure.callIds)) {
        await trx.deleteFrom('reports').where('call_id', 'in', ids).execute();
        await trx.deleteFrom('deliveries').where('call_id', 'in', ids).execute();
        await trx.deleteFrom('calls').where('call_id', 'in', ids).execute();
      }
      for (const ids of chunks(erasure.endedSessions)) {
        await trx.deleteFrom('deliveries').where('session_id', 'in', ids).execute();
        await trx.deleteFrom('webhook_sessions').where('session_id', 'in', ids).execute();
      }
      await trx.deleteFrom('outbound_requests').where('to_number', '=', erasure.number).execute();
      for (const contact of erasure.contacts) {
        await trx
          .updateTable('campaign_contacts')
          .set({ number: '', variables: '{}', last_session_id: null, last_error: null, updated_at: record.erasedAt })
          .where('campaign_id', '=', String(contact.campaign_id))
          .where('idx', '=', Number(contact.idx))
          .execute();
      }
      if (erasure.stopList) {
        await trx.insertInto('stop_list').values({ number: erasure.number, reason: erasure.stopList.reason, added_at: record.erasedAt }).execute();
      }
      await trx.insertInto('erasures').values({ id: record.id, erased_at: record.erasedAt, actor: record.actor, counts: JSON.stringify(record.counts) }).execute();
    });
  }

  /**
   * Wipes what an erasure deleted from the database's files (a rewrite of each table it changed on
   * PostgreSQL). Nothing changed: all of them, since erasing again is how a wipe that could not be
   * done is tried again.
   */
  async wipeErased(erased: ErasedAmounts): Promise<Wiped> {
    return wipeDeleted(this.db, this.dialect, erasedTables(erased));
  }
}

function erasedTables(erased: ErasedAmounts): (typeof ERASED_TABLES)[number][] {
  const tables: (typeof ERASED_TABLES)[number][] = [];
  // A call's number was held in outbound_requests while it lasted (a ring, the person on the line): deleted at its end, not wiped.
  if (erased.calls > 0) tables.push('reports', 'deliveries', 'calls', 'webhook_sessions', 'outbound_requests');
  else if (erased.deliveries > 0) tables.push('deliveries');
  if (erased.outboundRequests > 0) tables.push('outbound_requests');
  if (erased.campaignContacts > 0) tables.push('campaign_contacts');
  return tables.length > 0 ? tables : [...ERASED_TABLES];
}

/** A refused record is the person's when the number of its call's person is. */
function recordPicker(isTheirs: IsTheirs): (record: Record<string, unknown>) => boolean {
  return (record) => {
    const call = record.call as { direction?: unknown; from?: unknown; to?: unknown } | undefined;
    return call !== undefined && isTheirs(call.direction === 'outbound' ? call.to : call.from);
  };
}

/** Reads (or changes) the store journal; a failure says where, whatever it was. */
async function journal<T>(where: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw new JournalUnreadableError(where, error);
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

function unique(rows: StoredRow[], key: string): StoredRow[] {
  const seen = new Set<unknown>();
  return rows.filter((row) => (seen.has(row[key]) ? false : (seen.add(row[key]), true)));
}
