/**
 * A long contact list is read and written while calls go on: no slice of the work holds the event
 * loop the calls share for long. Hotline runs in this process, so the test sees every stall.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, expect, test } from 'vitest';
import { WEEKDAYS } from '../src/campaigns/definition.js';
import type { CampaignProgress } from '../src/campaigns/progress.js';
import { startFakeAiFlowApi, type FakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const ADMIN = 'admin-token-1';
const ROWS = 150_000;
/**
 * The rule is 50 ms of work without a turn for the calls. On a loaded machine the wall-clock gaps
 * also hold the time other processes had the CPU, so the test measures the CPU time this thread
 * spent within each gap (Linux's per-thread counters, in 10 ms steps) and allows for the steps and
 * a garbage collection. Before slicing, this list held the loop 1.2–4 s.
 */
const CPU_LIMIT_MS = 100;
/** Wall-clock, only where the thread's CPU cannot be counted (another OS); generous for a loaded CI machine. */
const WALL_LIMIT_MS = 1000;

/** CPU time (user + system) this thread has used, in ms; undefined where /proc is not there. */
function threadCpuMs(): number | undefined {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in 1/100 s.
    const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** A POST of bytes ready to go, as a voice service's or an admin's client on another host would send them. */
function post(url: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'content-length': body.length },
    });
    request.once('error', reject);
    request.once('response', (response) => {
      const pieces: Buffer[] = [];
      response.on('data', (piece: Buffer) => pieces.push(piece));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(pieces).toString('utf8') }));
      response.once('error', reject);
    });
    request.end(body);
  });
}

let env: TestHotline | undefined;
let api: FakeAiFlowApi | undefined;
let location: TestStoreLocation | undefined;
afterEach(async () => {
  await env?.close();
  await api?.close();
  await location?.remove();
  env = undefined;
  api = undefined;
  location = undefined;
});

test.each(await storeKinds())(`a ${ROWS.toLocaleString('en')}-row contact list is accepted without holding the event loop over ${CPU_LIMIT_MS} ms at a time (%s)`, async (kind) => {
  api = await startFakeAiFlowApi({ defaultFlow: { phoneNumber: true } });
  location = await freshStoreLocation(kind);
  env = await startTestHotline(scriptByUserText({}), {
    ...location.env,
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
  // Encoded before the measurement, and sent as it is: fetch() encoding and copying 5 MB on this thread held it ~100 ms,
  // which is the test's own work, not Hotline's.
  const body = Buffer.from(JSON.stringify({ name: 'large', calling_hours: { days: [day], from: '00:00', to: '24:00' }, contacts: lines.join('\n') }));
  expect(body.length).toBeLessThan(5 * 1024 * 1024);

  // The longest gap between ticks of a 5 ms timer, the CPU this thread used within a gap, and Node's own histogram.
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  let last = performance.now();
  let lastCpu = threadCpuMs();
  let longestGapMs = 0;
  let mostCpuMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    longestGapMs = Math.max(longestGapMs, now - last);
    if (cpu !== undefined && lastCpu !== undefined) mostCpuMs = Math.max(mostCpuMs, cpu - lastCpu);
    last = now;
    lastCpu = cpu;
  }, 5);
  histogram.enable();
  const started = performance.now();
  const res = await post(`${env.hotline.url}/api/campaigns`, body);
  const tookMs = performance.now() - started;
  const created = JSON.parse(res.text) as { id: string; contacts: number; merged: number; duplicates: unknown[] };
  const progress = (await (await fetch(`${env.hotline.url}/api/campaigns/${created.id}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as CampaignProgress;
  clearInterval(ticker);
  histogram.disable();
  const maxDelayMs = histogram.max / 1e6;

  const figures =
    `${ROWS} rows accepted in ${Math.round(tookMs)} ms; longest timer gap ${Math.round(longestGapMs)} ms ` +
    `(event-loop delay max ${Math.round(maxDelayMs)} ms), most CPU in one gap ${lastCpu === undefined ? 'not measured' : `${mostCpuMs} ms`}`;
  if (process.env.REPORT_FIGURES) console.info(figures);
  // Where the thread's CPU is counted, it decides: a wall-clock gap also holds the time other processes had the
  // cores (1,066 ms once, with 70 ms of this thread's CPU in it, beside a CPU hog).
  if (lastCpu !== undefined) expect(mostCpuMs, figures).toBeLessThan(CPU_LIMIT_MS);
  else expect(longestGapMs, figures).toBeLessThan(WALL_LIMIT_MS);
  expect(res.status).toBe(201);
  expect(created).toMatchObject({
    contacts: ROWS,
    merged: 3,
    duplicates: [{ number: '4915100000000', kept: 'line 2', merged: [`line ${ROWS + 2}`, `line ${ROWS + 3}`, `line ${ROWS + 4}`] }],
  });
  expect(progress).toMatchObject({ state: 'running', contacts: ROWS, merged: 3, pending: ROWS, called: 0 });
  expect(api.calls).toHaveLength(0);
}, 120_000);

test('a campaign over the 5 MB a request may carry is refused with 413, saying how to send it instead', async () => {
  api = await startFakeAiFlowApi({ defaultFlow: { phoneNumber: true } });
  env = await startTestHotline(scriptByUserText({}), { ADMIN_TOKEN: ADMIN, AIFLOW_API_URL: api.url, AIFLOW_ACCESS_TOKEN: 'platform-token', AIFLOW_ID: 'flow-1', AIFLOW_BILLING_DEVICE: 'dev-1' });
  // 120,000 rows as JSON objects: about 6 MB.
  const contacts = Array.from({ length: 120_000 }, (_, i) => ({ phone: `+49 151 ${String(i).padStart(8, '0')}`, name: `Person ${i}` }));
  const res = await fetch(`${env.hotline.url}/api/campaigns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'too large', contacts }),
  });
  expect(res.status).toBe(413);
  expect(await res.json()).toEqual({
    error: 'the campaign is larger than 5 MB: send the contacts as CSV text (about 30 bytes a row), or split the list into several campaigns',
  });
  expect(api.calls).toHaveLength(0);
}, 60_000);
