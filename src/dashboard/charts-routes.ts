import type { Router } from 'express';
import { DAY_RANGES } from '../store/call-stats.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { numbersShown } from './numbers-shown.js';
import { chartsPage } from './pages/charts.js';
import { whoOf } from './gates.js';
import { sendPage } from './respond.js';

/** The charts of calls over a range of days. */
export function chartsRoutes(router: Router, deps: Pick<DashboardDeps, 'reads'>): void {
  router.get('/dashboard/charts', async (req, res) => {
    // A range is no personal data: it may sit in the URL, so a chart of 90 days can be bookmarked.
    const asked = Number(req.query.days);
    const dayCount = DAY_RANGES.find((days) => days === asked) ?? DAY_RANGES[0];
    sendPage(res, chartsPage(await deps.reads.charts(new Date(), dayCount), { numbersShown: numbersShown(req), role: whoOf(res).role }));
  });
}
