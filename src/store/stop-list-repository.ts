/**
 * The global stop list (`stop_list`) and the waiting contacts it refuses. Apart from the campaigns'
 * definitions and claims because it is every campaign's at once: a number stopped in one campaign's
 * call is never called by any, and a campaign finds out by the list's mark, not by reading it whole.
 */
import { z } from 'zod';
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from './schema.js';
import type { Store } from './store.js';
import { NEVER_CALLED } from './campaign-records.js';

/** Numbers per `IN (…)` list. */
const IN_BATCH = 500;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export class StopListRepository {
  private readonly db: Db;

  constructor(private readonly store: Store) {
    this.db = store.db;
  }

  /** Changes whenever a number joins the global stop list. */
  async stopListMark(): Promise<number> {
    return stopListMarkOn(this.db);
  }

  /**
   * Every waiting contact whose number joined the global stop list after row `since` (a `stopListMark`),
   * or is one of `numbers` (normalised), ends `refused`, never called. Returns how many did.
   */
  async refuseStopped(campaignId: string, since: number, numbers: readonly string[], now: Date): Promise<number> {
    const at = now.toISOString();
    return this.db.transaction().execute(async (trx) => {
      // From the stop list's side, through the index on numbers: a look costs the rows added since the last, not the contacts.
      const stoppedSince = await sql`UPDATE campaign_contacts ${this.byNumber()}
        SET status = 'done', outcome = 'refused', last_error = ${NEVER_CALLED}, updated_at = ${at}
        WHERE campaign_id = ${campaignId} AND number IN (SELECT number FROM stop_list WHERE rowid > ${since}) AND status = 'pending'`.execute(trx);
      let changes = Number(stoppedSince.numAffectedRows ?? 0n);
      for (const some of chunks(numbers, IN_BATCH)) {
        const listed = await sql`UPDATE campaign_contacts ${this.byNumber()}
          SET status = 'done', outcome = 'refused', last_error = ${NEVER_CALLED}, updated_at = ${at}
          WHERE campaign_id = ${campaignId} AND number IN (${sql.join(some)}) AND status = 'pending'`.execute(trx);
        changes += Number(listed.numAffectedRows ?? 0n);
      }
      return changes;
    });
  }

  async isStopped(number: string): Promise<boolean> {
    const row = await this.db.selectFrom('stop_list').select('number').where('number', '=', number).executeTakeFirst();
    return row !== undefined;
  }

  /** `number` normalised, as every number compared with the list is. */
  async addToStopList(number: string, reason: string, now: Date): Promise<void> {
    await this.db
      .insertInto('stop_list')
      .values({ number, reason, added_at: now.toISOString() })
      .onConflict((oc) => oc.column('number').doNothing())
      .execute();
  }

  /**
   * Rewrites the stop list's rows written before numbers were normalised (`0049…`, a national `0151…`)
   * as `normalise` says; a row it cannot read (undefined) is kept as it is. Returns those kept.
   */
  async normaliseStopList(normalise: (number: string) => string | undefined): Promise<string[]> {
    const kept: string[] = [];
    const Row = z.object({ number: z.string(), reason: z.string(), added_at: z.string() });
    await this.db.transaction().execute(async (trx) => {
      // Anything but E.164 digits: rows written before numbers were normalised. GLOB is SQLite's; PostgreSQL has regular expressions.
      const notDigits: Expression<SqlBool> =
        this.store.dialect === 'sqlite' ? sql<SqlBool>`(number NOT GLOB '[1-9]*' OR number GLOB '*[^0-9]*')` : sql<SqlBool>`number !~ '^[1-9][0-9]*$'`;
      const rows = await trx.selectFrom('stop_list').select(['number', 'reason', 'added_at']).where(notDigits).execute();
      for (const row of rows.map((r) => Row.parse(r))) {
        const number = normalise(row.number);
        if (number === undefined || number === row.number) {
          kept.push(row.number);
          continue;
        }
        await trx
          .insertInto('stop_list')
          .values({ number, reason: row.reason, added_at: row.added_at })
          .onConflict((oc) => oc.column('number').doNothing())
          .execute();
        await trx.deleteFrom('stop_list').where('number', '=', row.number).execute();
      }
    });
    return kept;
  }

  /** SQLite is told to find a campaign's contacts by number (its planner would take the index on status); PostgreSQL's planner chooses well. */
  byNumber(): RawBuilder<unknown> {
    return this.store.dialect === 'sqlite' ? sql.raw('INDEXED BY campaign_contacts_number') : sql.raw('');
  }
}

/** Rows are only ever added: the highest rowid changes exactly when the list grows (PostgreSQL's table has a rowid column for this). */
export async function stopListMarkOn(db: Db): Promise<number> {
  const { rows } = await sql<{ mark: number }>`SELECT COALESCE(MAX(rowid), 0) AS mark FROM stop_list`.execute(db);
  return z.object({ mark: z.number() }).parse(rows[0]).mark;
}
