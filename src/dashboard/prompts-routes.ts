import type { Router } from 'express';
import type { DashboardDeps } from './dashboard-deps.js';
import { numbersShown } from './numbers-shown.js';
import { promptsPage } from './pages/prompts.js';
import { whoOf } from './gates.js';
import { sendPage } from './respond.js';

/** The prompts folder's version in use and what its check found. */
export function promptsRoutes(router: Router, deps: Pick<DashboardDeps, 'promptsStatus' | 'reads'>): void {
  router.get('/dashboard/prompts', async (req, res) =>
    sendPage(res, promptsPage(deps.promptsStatus(), { numbersShown: numbersShown(req), role: whoOf(res).role }, await deps.reads.checkPrompts())),
  );
}
