import { z } from 'zod';
import { CAMPAIGN_STATES, countTally } from '../store/campaign-rows.js';
import type { Database } from '../store/database.js';
import { progressOf, type CampaignProgress } from './progress.js';

const CampaignRow = z.object({
  id: z.string(),
  name: z.string(),
  state: z.enum(CAMPAIGN_STATES),
  last_started_at: z.number().nullable(),
  merged: z.number(),
  stop_mark: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});

/**
 * Every campaign's progress, newest first, read synchronously from the old `Database` — only for the
 * dashboard's reader thread until the dashboard reads the asynchronous store (issue 22); then this
 * file goes. It reads the same SQLite file the campaigns are written to.
 */
export function legacyCampaignProgress(db: Database): CampaignProgress[] {
  const campaigns = db.sql.prepare('SELECT * FROM campaigns WHERE complete = 1 ORDER BY created_at DESC, id DESC').all();
  const tally = db.sql.prepare<[string]>('SELECT status, outcome, called, n FROM campaign_tally WHERE campaign_id = ? AND n > 0');
  const nextRetry = db.sql.prepare<[string]>(
    `SELECT MIN(next_attempt_at) AS at FROM campaign_contacts WHERE campaign_id = ? AND status = 'pending' AND next_attempt_at > 0`,
  );
  return campaigns.map((raw) => {
    const row = CampaignRow.parse(raw);
    const campaign = {
      id: row.id,
      name: row.name,
      settings: { name: row.name },
      state: row.state,
      lastStartedAt: row.last_started_at,
      merged: row.merged,
      stopMark: row.stop_mark,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
    const at = z.object({ at: z.number().nullable() }).parse(nextRetry.get(row.id)).at;
    return progressOf(campaign, countTally(tally.all(row.id), at));
  });
}
