/**
 * What a campaign's contacts are and how far it has got: the lists read a page at a time, one
 * contact, and the counts from campaign_tally (kept by triggers, so a count costs a few rows however
 * long the list). Reads only: the claims and the definitions write.
 */
import { z } from 'zod';
import { sql } from 'kysely';
import type { Db } from './schema.js';
import { countTally, type ContactStatus, type ContactTally } from './campaign-rows.js';
import { At, CONTACT_COLUMNS, ContactRow, type StoredContact } from './campaign-records.js';

const Count = z.object({ n: z.number() });

export class CampaignProgressQueries {
  constructor(private readonly db: Db) {}

  async contacts(campaignId: string): Promise<StoredContact[]> {
    const rows = await this.db.selectFrom('campaign_contacts').select(CONTACT_COLUMNS).where('campaign_id', '=', campaignId).orderBy('idx').execute();
    return rows.map((row) => ContactRow.parse(row));
  }

  /** At most `limit` contacts after the one at `afterIndex` (-1: from the first), in order: a long list a page at a time. */
  async contactsAfter(campaignId: string, afterIndex: number, limit: number): Promise<StoredContact[]> {
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select(CONTACT_COLUMNS)
      .where('campaign_id', '=', campaignId)
      .where('idx', '>', afterIndex)
      .orderBy('idx')
      .limit(limit)
      .execute();
    return rows.map((row) => ContactRow.parse(row));
  }

  /** The contacts in one status, e.g. those a stopped process left in a call. */
  async contactsIn(campaignId: string, status: ContactStatus): Promise<StoredContact[]> {
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select(CONTACT_COLUMNS)
      .where('campaign_id', '=', campaignId)
      .where('status', '=', status)
      .orderBy('idx')
      .execute();
    return rows.map((row) => ContactRow.parse(row));
  }

  async contact(campaignId: string, index: number): Promise<StoredContact | undefined> {
    const row = await this.db.selectFrom('campaign_contacts').select(CONTACT_COLUMNS).where('campaign_id', '=', campaignId).where('idx', '=', index).executeTakeFirst();
    return row === undefined ? undefined : ContactRow.parse(row);
  }

  async inCallCount(campaignId: string): Promise<number> {
    return inCallOn(this.db, campaignId);
  }

  /** Whether any contact is not done yet. */
  async hasOpenContacts(campaignId: string): Promise<boolean> {
    // From campaign_tally (kept by triggers): a few rows, however many contacts.
    const row = await this.db
      .selectFrom('campaign_tally')
      .select(sql<number>`1`.as('open'))
      .where('campaign_id', '=', campaignId)
      .where('status', '!=', 'done')
      .where('n', '>', 0)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async tally(campaignId: string): Promise<ContactTally> {
    // Counts from campaign_tally (kept by triggers): a few rows, however many contacts.
    const rows = await this.db.selectFrom('campaign_tally').select(['status', 'outcome', 'called', 'n']).where('campaign_id', '=', campaignId).where('n', '>', 0).execute();
    // A waiting contact has been called before exactly when it waits for a time (a first call waits for 0): the index's first.
    const retry = await this.db
      .selectFrom('campaign_contacts')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '>', 0)
      .executeTakeFirst();
    return countTally(rows, At.parse(retry).at);
  }
}

/** Contacts in a call now (`calling`, `reached`); on `db`, a transaction's own when a claim counts within it. */
export async function inCallOn(db: Db, campaignId: string): Promise<number> {
  const row = await db
    .selectFrom('campaign_tally')
    .select(sql<number>`COALESCE(SUM(n), 0)`.as('n'))
    .where('campaign_id', '=', campaignId)
    .where('status', 'in', ['calling', 'reached'])
    .executeTakeFirst();
  return Count.parse(row).n;
}
