/**
 * Soak test, not part of CI: keeps many calls talking for a while, then ends
 * them and checks that memory and open handles return to their baseline.
 *
 *   npm run soak -- [--calls 200] [--minutes 10]      (--help for the usage)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { loadConfig } from '../config.js';
import { startScriptedLlmServer } from '../llm/scripted-server.js';
import { startHotline } from '../server.js';
import { FakeVoiceService } from '../testing/voice-service-client.js';
import { command, commandLineOrExit, endQuietlyWhenOutputCloses, numberOption } from '../command-line.js';

const USAGE = `Usage: npm run soak -- [--calls 200] [--minutes 10]

Soak test, not part of CI: starts Hotline and a scripted LLM server on 127.0.0.1, keeps many calls
talking for a while, then ends them and prints memory and open handles against the baseline taken
before the calls. Run it through npm: the script starts Node with --expose-gc for exact figures.
  --calls <n>        calls talking at once (default 200)
  --minutes <n>      how long they talk; fractions allowed (default 10)

Example:
  npm run soak -- --calls 50 --minutes 2`;

const SOAK = command({
  name: 'soak',
  usage: USAGE,
  allowPositionals: false,
  options: { calls: { type: 'string' }, minutes: { type: 'string' } },
});

// Before any server starts: --help and bad usage end the process here.
const { calls, durationMs } = commandLineOrExit(SOAK, process.argv.slice(2), ({ values }) => ({
  calls: numberOption('--calls', values.calls, 200, { min: 1, integer: true }),
  durationMs: numberOption('--minutes', values.minutes, 10) * 60_000,
}));
endQuietlyWhenOutputCloses();

const gc = (globalThis as { gc?: () => void }).gc;
function snapshot(): { rssMb: number; heapMb: number; handles: number } {
  gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMb: Math.round(rss / 1048576), heapMb: Math.round(heapUsed / 1048576), handles: process.getActiveResourcesInfo().length };
}

const llm = await startScriptedLlmServer({
  script: () => ({ content: 'Sure, I can help with that. Our hours are nine to six. Anything else?' }),
  host: '127.0.0.1',
  ttftMs: 200,
  tokenDelayMs: 15,
  record: false,
});
const transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-soak-'));
const hotline = await startHotline(
  loadConfig({
    NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', OPENAI_API_KEY: 'soak', OPENAI_BASE_URL: llm.baseURL,
    TRANSCRIPTS_DIR: transcriptsDir, RATE_LIMIT_WS_PER_MINUTE: '0', MAX_CALLS: String(calls * 2), REPORT_FIELDS: 'false',
  }),
  pino({ level: 'warn' }),
  { watchPrompts: false },
);

// Warm up once so lazily created things (JIT, pools) are part of the baseline.
const warm = await FakeVoiceService.connect(hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 1 } });
warm.start();
await warm.nextOfType('speak');
warm.end();
await warm.close();
await sleep(500);
const baseline = snapshot();
console.log('baseline', baseline);

let turns = 0;
let peak = baseline;
const stopAt = Date.now() + durationMs;
async function talk(index: number): Promise<void> {
  await sleep(Math.random() * 2000);
  const service = await FakeVoiceService.connect(hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 1 } });
  service.start();
  await service.nextOfType('speak');
  while (Date.now() < stopAt) {
    service.say(`question ${turns} from caller ${index}`, { bargedIn: Math.random() < 0.1 });
    await service.next((a) => a.type === 'speak' && a.text === 'Anything else?');
    turns++;
    await sleep(500 + Math.random() * 2000);
  }
  service.end('soak_over');
  await service.close();
}
const sampler = setInterval(() => {
  const now = snapshot();
  if (now.rssMb > peak.rssMb) peak = now;
  console.log(`${new Date().toISOString()} calls=${hotline.registry.size} turns=${turns}`, now);
}, 30_000);
await Promise.all(Array.from({ length: calls }, (_, i) => talk(i)));
clearInterval(sampler);
await sleep(1000);
const after = snapshot();
console.log('after the calls ended', after, 'peak', peak, `turns ${turns}`);
console.log(
  `memory ${after.rssMb - baseline.rssMb >= 0 ? '+' : ''}${after.rssMb - baseline.rssMb} MB RSS, ` +
    `${after.heapMb - baseline.heapMb} MB heap, handles ${baseline.handles} → ${after.handles}, calls left ${hotline.registry.size}`,
);
await hotline.close();
await llm.close();
await rm(transcriptsDir, { recursive: true, force: true });
