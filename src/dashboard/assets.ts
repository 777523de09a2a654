import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Request, Response, Router } from 'express';
import { CHARTS_SCRIPT } from './charts-script.js';
import { FAVICON_SVG } from './favicon.js';
import { FILTERS_SCRIPT } from './filters-script.js';
import { CALL_LIVE_SCRIPT } from './pages/live-call.js';
import { LIVE_SCRIPT } from './pages/live.js';
import { STORY_SCRIPT } from './story-script.js';
import { DASHBOARD_CSS } from './styles.js';

/** The icon, at the dashboard's own path and at /favicon.ico. */
export function faviconRoutes(router: Router): void {
  const favicon = (_req: Request, res: Response) => void res.type('image/svg+xml').set('Cache-Control', 'public, max-age=86400').send(FAVICON_SVG);
  router.get('/dashboard/assets/favicon.svg', favicon);
  router.get('/favicon.ico', favicon);
}

/** The style sheet and the pages' scripts, all served from here. */
export function assetRoutes(router: Router): void {
  const chartJs = chartJsSource();
  const scripts: Record<string, string> = { 'live.js': LIVE_SCRIPT, 'call-live.js': CALL_LIVE_SCRIPT, 'charts.js': CHARTS_SCRIPT, 'story.js': STORY_SCRIPT, 'filters.js': FILTERS_SCRIPT, ...(chartJs ? { 'chart.umd.min.js': chartJs } : {}) };
  router.get('/dashboard/assets/dashboard.css', (_req, res) => void res.type('css').send(DASHBOARD_CSS));
  router.get('/dashboard/assets/:name', (req, res, next) => {
    const name = String(req.params.name);
    // Own names only: "constructor" is not a script.
    if (!Object.hasOwn(scripts, name)) return next();
    const script = scripts[name]!;
    res.type('js').send(script);
  });
}

/** Chart.js's UMD build, from the installed package: served as a file of our own, nothing from a CDN. */
function chartJsSource(): string | undefined {
  try {
    const main = createRequire(import.meta.url).resolve('chart.js');
    return readFileSync(path.join(path.dirname(main), 'chart.umd.min.js'), 'utf8');
  } catch {
    return undefined;
  }
}
