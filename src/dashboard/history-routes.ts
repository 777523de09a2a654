import type { Request, Response, Router } from 'express';
import { csvLines, type CsvCell } from '../csv.js';
import type { CallListing } from '../store/call-search.js';
import { CsvExports } from '../transport/csv-export.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { parseFilter } from './filter-form.js';
import { showNumber } from './layout.js';
import { numbersHidden, numbersShown } from './numbers-shown.js';
import { historyPage, PAGE_SIZE } from './pages/history.js';
import { whoOf } from './gates.js';
import { formBody, sendPage } from './respond.js';
import { guardStream, type StreamGuards } from './stream-guard.js';

/** Calls per slice of a CSV export: formatting a slice here takes about half a millisecond. */
const CSV_BATCH = 100;

/** The history of calls, filtered and paged, and the same calls as a CSV file. */
export function historyRoutes(router: Router, deps: Pick<DashboardDeps, 'reads' | 'exports' | 'logger'>, guards: StreamGuards): void {
  const exports = deps.exports ?? new CsvExports(deps.logger);

  const history = async (req: Request, res: Response) => {
    const input = { ...(req.query as Record<string, unknown>), ...((req.body ?? {}) as Record<string, unknown>) };
    const parsed = parseFilter(input, { numbersMasked: numbersHidden(req) });
    const { reads } = deps;
    const [{ calls, total, cost }, fieldNames, campaigns, failedDeliveries] = await Promise.all([
      reads.page(parsed.filter, PAGE_SIZE, (parsed.page - 1) * PAGE_SIZE),
      reads.fieldNames(),
      reads.campaigns(),
      reads.failedDeliveries(),
    ]);
    sendPage(res, historyPage({ parsed, calls, total, cost, fieldNames, campaigns, failedDeliveries, numbersShown: numbersShown(req), role: whoOf(res).role }));
  };
  router.get('/dashboard/calls', history);
  router.post('/dashboard/calls', formBody, history);

  router.post('/dashboard/calls.csv', formBody, async (req: Request, res: Response) => {
    const { filter } = parseFilter((req.body ?? {}) as Record<string, unknown>, { numbersMasked: numbersHidden(req) });
    const shown = numbersShown(req);
    const { reads } = deps;
    // A batch at a time, each only once the client has taken the last: never the whole file in memory.
    async function* rows(): AsyncGenerator<string> {
      yield csvLines([CSV_COLUMNS]);
      for (let after: CallListing | undefined; ; ) {
        const batch = await reads.batch(filter, after, CSV_BATCH);
        if (batch.length === 0) return;
        yield csvLines(batch.map((call) => csvRow(call, shown)));
        after = batch.at(-1);
      }
    }
    // A large file to a slow reader takes long: it goes on only while the session stands, and is cut, never ended cleanly, when not.
    const release = guardStream(req, res, guards, 'export', () => res.destroy());
    try {
      await exports.send(req, res, 'hotline-calls.csv', rows());
    } finally {
      release();
    }
  });
}

const CSV_COLUMNS = ['session_id', 'started_at', 'ended_at', 'direction', 'from', 'to', 'duration_s', 'end_reason', 'turns', 'barge_ins', 'campaign', 'summary', 'fields', 'call_id', 'cost_usd'];

function csvRow(call: CallListing, shown: boolean): CsvCell[] {
  return [
    call.sessionId,
    call.startedAt,
    call.endedAt,
    call.direction,
    showNumber(call.from, shown),
    showNumber(call.to, shown),
    Math.round(call.durationMs / 1000),
    call.endReason,
    call.turns,
    call.bargeIns,
    call.campaign ?? '',
    call.summary ?? '',
    call.fields ? JSON.stringify(call.fields) : '',
    // Last, so the columns before keep their places: a session id the service used again is another call.
    call.callId,
    // After it for the same reason; unrounded. Empty when not known: no figure, rather than a 0 that looks like one.
    call.costUsd ?? '',
  ];
}
