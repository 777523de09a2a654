/**
 * Remakes docs/dashboard-story.png, the README's picture of a call's story:
 *
 *     npx tsx test/docs-screenshot.ts            (writes docs/dashboard-story.png)
 *     npx tsx test/docs-screenshot.ts out.png    (writes elsewhere)
 *
 * A real call, as the tests make them: a real Hotline on port 0, the real openai SDK against the
 * scripted OpenAI-compatible server, a shop answering the shipped order_status tool, and a real
 * WebSocket playing the voice service. The caller asks about an order (the tool runs, with its
 * hold line), cuts a story short (the interrupted reply), and says goodbye; the report is written.
 * Debian's Chromium (playwright-core) logs in to the dashboard and takes the story's page whole.
 * Nothing here is run by `npm test` (the name does not end in .test.ts).
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startScriptedLlmServer, type ChatRequestBody, type ScriptedReply } from '../src/llm/scripted-server.js';
import { startHotline } from '../src/server.js';
import { chromiumPath, launchChromium } from '../src/testing/chromium.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startBusinessServer } from './helpers/business-server.js';
import { repoRoot } from './helpers/child-process.js';
import { lastUserText } from './helpers/scripts.js';

const ADMIN = 'screenshot-admin-token-0123456789';
const STORY = 'Once upon a time there was a small phone agent. It listened to every caller. It never talked over anyone. And it always said goodbye.';
const FIELDS = { summary: 'The caller asked where order 4711 is (shipped, arriving tomorrow), cut a story short and said goodbye.', callback_wanted: false, customer_number: '4711', sentiment: 'positive', resolved: true };

function script(request: ChatRequestBody): ScriptedReply {
  if ('response_format' in request && request.response_format) return { content: JSON.stringify(FIELDS) };
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { content: 'Your order 4711 left our warehouse yesterday with DHL and should arrive tomorrow.' };
  switch (lastUserText(request)) {
    case 'Where is my order 4711?':
      return { toolCalls: [{ name: 'order_status', arguments: '{"order_number":"4711"}' }] };
    case 'Great. Tell me a story while I wait?':
      return { content: STORY, tokenDelayMs: 20 };
    case 'Enough, thanks!':
      return { content: 'Of course. Is there anything else I can do for you?' };
    case 'No, that is all. Bye!':
      return { content: 'Thank you for calling, goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] };
    default:
      return { content: 'How can I help?' };
  }
}

const out = path.resolve(process.argv[2] ?? path.join(repoRoot, 'docs', 'dashboard-story.png'));
const browserPath = chromiumPath();
if (!browserPath) throw new Error('No Chromium found: install Debian\'s "chromium" package');

// The shop takes a moment, so that the caller hears the tool's hold line.
const shop = await startBusinessServer(async (req, res) => {
  await sleep(1_300);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ order: { number: '4711', status: 'shipped', carrier: 'DHL', expected: 'tomorrow' }, asked: req.url }));
});
const llm = await startScriptedLlmServer({ script, host: '127.0.0.1', ttftMs: 180, tokenDelayMs: 12 });
const vars = {
  NODE_ENV: 'test',
  HOST: '127.0.0.1',
  PORT: '0',
  OPENAI_API_KEY: 'screenshot',
  OPENAI_BASE_URL: llm.baseURL,
  LLM_MODEL: 'gpt-4o-mini',
  ADMIN_TOKEN: ADMIN,
  SHOP_API_URL: shop.url,
  TOOL_HOLD_MS: '400',
  DATABASE_FILE: ':memory:',
  TRANSCRIPTS_DIR: path.join(repoRoot, 'test-results', 'docs-screenshot-transcripts'),
  REPORT_FIELDS: 'true',
};
const hotline = await startHotline(loadConfig(vars), pino({ level: 'silent' }), { env: vars });
const browser = await launchChromium(browserPath);
try {
  // The call: each sentence plays in 35 ms per character, as a voice would take its time.
  const MS_PER_CHAR = 35;
  const service = await FakeVoiceService.connect(hotline.wsUrl, { playback: { kind: 'auto', msPerChar: MS_PER_CHAR } });
  service.start({ from_phone_number: '4915112345678' });
  await service.nextOfType('speak');
  await service.whenQuiet();
  service.say('Where is my order 4711?');
  await service.next((a) => a.text?.startsWith('Your order 4711') === true);
  await service.whenQuiet();
  service.say('Great. Tell me a story while I wait?');
  // The first sentence plays whole, the caller cuts in halfway through the second.
  const first = await service.next((a) => a.text?.startsWith('Once upon a time') === true);
  await service.next((a) => a.text === 'It listened to every caller.');
  await sleep((first.text!.length + 14) * MS_PER_CHAR);
  service.say('Enough, thanks!', { bargedIn: true });
  await service.next((a) => a.text?.startsWith('Of course.') === true);
  await service.whenQuiet();
  service.say('No, that is all. Bye!');
  await service.nextOfType('hangup');
  service.end('hangup');
  await hotline.registry.whenEmpty();
  await hotline.registry.whenRecorded();
  await hotline.reports.whenIdle();
  await service.close();

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(`${hotline.url}/dashboard/login`);
  await page.fill('input[name=password]', ADMIN);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/dashboard\/$/);
  await page.goto(`${hotline.url}/dashboard/calls/${service.sessionId}`);
  await page.waitForSelector('#waterfall');
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await hotline.close();
  await llm.close();
  await shop.close();
}
