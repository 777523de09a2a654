/**
 * A long contact list is read and written while calls go on: no slice of the work holds the event
 * loop the calls share for long. Hotline runs in this process, so the test sees every stall.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, expect, test } from 'vitest';
import { WEEKDAYS } from '../src/campaigns/definition.js';
import type { CampaignProgress } from '../src/campaigns/progress.js';
import { startFakeAiFlowApi, type FakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';

const ADMIN = 'admin-token-1';
const ROWS = 150_000;
/**
 * The rule is 50 ms; a loaded two-core CI machine adds its own pauses (the scheduler, a GC) to
 * whatever Hotline does, so the test allows more. Before slicing, this list held the loop 1.2–2.7 s.
 */
const STALL_LIMIT_MS = 200;

let env: TestHotline | undefined;
let api: FakeAiFlowApi | undefined;
afterEach(async () => {
  await env?.close();
  await api?.close();
  env = undefined;
  api = undefined;
});

test(`a ${ROWS.toLocaleString('en')}-row contact list is accepted without a stall of the event loop over ${STALL_LIMIT_MS} ms`, async () => {
  api = await startFakeAiFlowApi({ defaultFlow: { phoneNumber: true } });
  env = await startTestHotline(scriptByUserText({}), {
    ADMIN_TOKEN: ADMIN,
    AIFLOW_API_URL: api.url,
    AIFLOW_ACCESS_TOKEN: 'platform-token',
    AIFLOW_ID: 'flow-1',
    AIFLOW_BILLING_DEVICE: 'dev-1',
  });
  // Every row a person; the last three are the first person written three more ways.
  const lines = ['phone,name'];
  for (let i = 0; i < ROWS; i++) lines.push(`+49 151 ${String(i).padStart(8, '0')},Person ${i}`);
  lines.push('0049 151 00000000,Again', '0049 (0)151 00000000,Again', '+49-151-0000-0000,Again');
  // Calling hours two days from now: nothing is dialled, the list is only read and stored.
  const day = WEEKDAYS[(new Date().getUTCDay() + 2) % 7]!;
  const body = JSON.stringify({ name: 'large', calling_hours: { days: [day], from: '00:00', to: '24:00' }, contacts: lines.join('\n') });
  expect(body.length).toBeLessThan(5 * 1024 * 1024);

  // Two views of the same thing: the longest gap between ticks of a 5 ms timer, and Node's own histogram.
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  let last = performance.now();
  let longestGapMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
  }, 5);
  histogram.enable();
  const started = performance.now();
  const res = await fetch(`${env.hotline.url}/api/campaigns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body,
  });
  const tookMs = performance.now() - started;
  const created = (await res.json()) as { id: string; contacts: number; merged: number; duplicates: unknown[] };
  const progress = (await (await fetch(`${env.hotline.url}/api/campaigns/${created.id}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as CampaignProgress;
  clearInterval(ticker);
  histogram.disable();
  const maxDelayMs = histogram.max / 1e6;

  expect(res.status).toBe(201);
  expect(created).toMatchObject({
    contacts: ROWS,
    merged: 3,
    duplicates: [{ number: '4915100000000', kept: 'line 2', merged: [`line ${ROWS + 2}`, `line ${ROWS + 3}`, `line ${ROWS + 4}`] }],
  });
  expect(progress).toMatchObject({ state: 'running', contacts: ROWS, merged: 3, pending: ROWS, called: 0 });
  expect(api.calls).toHaveLength(0);
  const figures = `${ROWS} rows accepted in ${Math.round(tookMs)} ms; longest timer gap ${Math.round(longestGapMs)} ms, event-loop delay max ${Math.round(maxDelayMs)} ms`;
  if (process.env.REPORT_FIGURES) console.info(figures);
  expect(longestGapMs, figures).toBeLessThan(STALL_LIMIT_MS);
  expect(maxDelayMs, figures).toBeLessThan(STALL_LIMIT_MS);
}, 120_000);
