/**
 * `npm run simulate` as users run it: src/cli/simulate.ts in a child process,
 * piped input, against a real Hotline on port 0 (scripted LLM, a business
 * tool answered by a real HTTP server).
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { startBusinessServer, type BusinessServer } from './helpers/business-server.js';
import { CHILD_TEST_TIMEOUT_MS } from './helpers/child-process.js';
import { folderWithEnv, runCli, startCli, type CliRun } from './helpers/cli.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText, scriptByUserText } from './helpers/scripts.js';

const SIMULATE = 'src/cli/simulate.ts';
/** Past 10 s: the time column's old format ran into the action's name from there on. */
const TOOL_MS = 10_500;

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The index of the first line matching, failing the test when there is none. */
function lineIndex(lines: string[], pattern: RegExp): number {
  const index = lines.findIndex((line) => pattern.test(line));
  expect(index, `no line matches ${pattern}:\n${lines.join('\n')}`).toBeGreaterThanOrEqual(0);
  return index;
}

describe('piped input with --speed 4 while a business tool takes over 10 s', () => {
  let shop: BusinessServer;
  let env: TestHotline;
  let prompts: string;
  let run: CliRun;

  beforeAll(async () => {
    // A slow order system: answering late is the point of the test, not a wait for something else.
    shop = await startBusinessServer((_req, res) => void setTimeout(() => json(res, { status: 'shipped' }), TOOL_MS));
    prompts = await mkdtemp(path.join(tmpdir(), 'hotline-simulate-cli-'));
    // The shipped prompts (silence handling on, as shipped), with one slow tool of the test's own.
    await cp(path.resolve('prompts'), prompts, { recursive: true });
    await rm(path.join(prompts, 'tools'), { recursive: true, force: true });
    await mkdir(path.join(prompts, 'tools'));
    await writeFile(
      path.join(prompts, 'tools', 'order_status.yaml'),
      [
        'description: Looks up an order by its number.',
        'parameters: { type: object, properties: { order_number: { type: string } }, required: [order_number] }',
        `request: { url: "${shop.url}/orders/{{order_number}}" }`,
        'timeout_ms: 30000',
        `hold: ["One moment, I'm looking up your order."]`,
      ].join('\n'),
    );
    const script = (request: ChatRequestBody): ScriptedReply => {
      if (request.messages.at(-1)?.role === 'tool') return { content: 'Your order 4711 has shipped.' };
      if (lastUserText(request) === 'Where is my order 4711?') {
        return { toolCalls: [{ name: 'order_status', arguments: '{"order_number":"4711"}' }] };
      }
      return { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] };
    };
    env = await startTestHotline(script, { PROMPTS_DIR: prompts });
    run = await runCli(SIMULATE, ['--url', env.hotline.wsUrl, '--speed', '4', '--answer-timeout-ms', '60000'], {
      input: 'Where is my order 4711?\nThanks, bye.\n',
    });
  }, CHILD_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await env?.close();
    await shop?.close();
    await rm(prompts, { recursive: true, force: true });
  });

  test("the next line waits for the tool's answer, after its hold lines", () => {
    const { lines } = run;
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    const hold = lineIndex(lines, /speak +"One moment, I'm looking up your order\."/);
    const answer = lineIndex(lines, /speak +"Your order 4711 has shipped\."/);
    const next = lineIndex(lines, /^you: Thanks, bye\.$/);
    expect(hold).toBeLessThan(answer);
    expect(answer).toBeLessThan(next);
    expect(lines.at(-1)).toBe('call ended: Hotline hung up');
    // The tool ran to its end: nothing cut it off.
    expect(shop.requests).toHaveLength(1);
  });

  test('a time past 10 s is shown in seconds and keeps its column', () => {
    const answer = run.lines.find((line) => line.includes('"Your order 4711 has shipped."'));
    expect(answer).toMatch(/^\+1\d\.\d s {2}speak {5}"Your order 4711 has shipped\."/);
    // Every action line: the time, then the action's name in the same column, whatever the time.
    const actions = run.lines.filter((line) => line.startsWith('+'));
    expect(actions.length).toBeGreaterThanOrEqual(4);
    for (const line of actions) {
      expect(line.slice(0, 9), line).toMatch(/^\+\d+(\.\d)? m?s +$/);
      expect(line.slice(9), line).toMatch(/^(speak|hangup)\b/);
    }
  });
});

describe('where simulate finds Hotline, and a reader that stops early', () => {
  let env: TestHotline;
  const ended = new Set<string>();
  const endWaiters = new Map<string, () => void>();
  beforeAll(async () => {
    // A connection dropped without a session_end keeps its call this long: only a proper hangup ends it at once.
    env = await startTestHotline(scriptByUserText({ bye: { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] } }), {
      WS_RECONNECT_GRACE_MS: '5000',
    });
    env.hotline.registry.onCallEnded((id) => {
      ended.add(id);
      endWaiters.get(id)?.();
    });
  });
  afterAll(() => env?.close());

  function callEnded(sessionId: string): Promise<void> {
    if (ended.has(sessionId)) return Promise.resolve();
    return new Promise((resolve) => endWaiters.set(sessionId, resolve));
  }

  test('without --url: at the PORT (and HOST) of the .env in the folder it runs in, BOT_URL before them; PORT=0 is refused', async () => {
    const port = new URL(env.hotline.url).port;
    const withPort = await folderWithEnv({ PORT: port });
    // A PORT where nothing listens: BOT_URL must be the one used.
    const withBotUrl = await folderWithEnv({ PORT: '9', BOT_URL: `http://127.0.0.1:${port}` });
    // Hotline listening on one address only: that address, not localhost.
    const withHost = await folderWithEnv({ PORT: port, HOST: '127.0.0.1' });
    // PORT=0 has Hotline pick a port only its log shows.
    const anyPort = await folderWithEnv({ PORT: '0' });
    try {
      const [fromPort, fromBotUrl, fromHost, unknown] = await Promise.all([
        runCli(SIMULATE, ['--speed', '50'], { cwd: withPort.dir, input: 'bye\n' }),
        runCli(SIMULATE, ['--speed', '50'], { cwd: withBotUrl.dir, input: 'bye\n' }),
        runCli(SIMULATE, ['--speed', '50'], { cwd: withHost.dir, input: 'bye\n' }),
        runCli(SIMULATE, [], { cwd: anyPort.dir, input: 'bye\n' }),
      ]);
      expect(fromPort.lines[0]).toMatch(new RegExp(`^calling Hotline at ws://localhost:${port}/ws `));
      expect(fromBotUrl.lines[0]).toMatch(new RegExp(`^calling Hotline at ws://127\\.0\\.0\\.1:${port}/ws `));
      expect(fromHost.lines[0]).toMatch(new RegExp(`^calling Hotline at ws://127\\.0\\.0\\.1:${port}/ws `));
      for (const run of [fromPort, fromBotUrl, fromHost]) {
        expect(run.code, run.stdout).toBe(0);
        expect(run.lines.at(-1)).toBe('call ended: Hotline hung up');
      }
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/^simulate: PORT=0 lets Hotline pick any free port, which only its log shows: give Hotline's address with --url or BOT_URL\./);
    } finally {
      await Promise.all([withPort, withBotUrl, withHost, anyPort].map((folder) => folder.remove()));
    }
  }, CHILD_TEST_TIMEOUT_MS);

  test('a reader that stops early (| head -2) ends it quietly: the call is hung up, exit 0, no stack', async () => {
    // Input still open: the call goes on until the caller's next line has nowhere to be shown.
    const cli = startCli(SIMULATE, ['--url', env.hotline.wsUrl, '--speed', '50'], { keepInputOpen: true });
    // As `head -2` does: two lines, then the pipe is closed.
    await cli.line(/speak +"Hello, thanks for calling!/);
    const sessionId = /session (\S+)$/.exec(cli.lines[0] ?? '')?.[1] ?? '';
    cli.child.stdout.destroy();
    cli.child.stdin.write('hello\n');
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toBe('');
    // It hung up as a caller does (session_end), rather than dropping the connection.
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still in progress'), 4000)));
    expect(await Promise.race([callEnded(sessionId).then(() => 'ended'), gaveUp])).toBe('ended');
    clearTimeout(timer);
  }, CHILD_TEST_TIMEOUT_MS);
});
