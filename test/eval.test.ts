/**
 * `npm run eval`: the shipped example evals against the scripted model, a
 * judge failing a criterion the call violates, a flaky criterion, a
 * regression found by --compare, a model error reported as such, and the
 * same run against "real" models (a scripted OpenAI-compatible server the
 * eval reaches through OPENAI_BASE_URL, as it would reach a provider).
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvalCli } from '../src/cli/eval.js';
import { checkedEvalFiles } from '../src/evals/check-evals.js';
import { checkPrompts } from '../src/prompts-check.js';
import { demoScript } from '../src/demo/demo-script.js';
import { startScriptedLlmServer, type ChatRequestBody, type ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { repoRoot } from './helpers/child-process.js';
import { chromiumPath, launchChromium, screenshotPath } from './helpers/browser.js';

const SHIPPED = path.join(repoRoot, 'prompts');

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'hotline-eval-test-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

interface Ran {
  code: number;
  output: string;
  outDir: string;
}

/** Runs the CLI with only the environment given: nothing of the developer's shell or .env. */
async function evalCli(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const outDir = await mkdtemp(path.join(work, 'out-'));
  const lines: string[] = [];
  // Speech plays 8 times faster than a person speaks (the default is 4): the same calls, sooner.
  const code = await runEvalCli([...args, '--out', outDir, '--speed', '8'], env, (line) => lines.push(line), (message) => lines.push(`usage: ${message}`));
  return { code, output: lines.join('\n'), outDir };
}

/** A prompt folder: the shipped prompts, with these evals and these files changed. */
async function promptFolder(name: string, evals: Record<string, string>, files: Record<string, string> = {}): Promise<string> {
  const dir = path.join(work, name);
  await cp(SHIPPED, dir, { recursive: true, filter: (source) => !source.includes(`${path.sep}evals`) });
  for (const [file, text] of Object.entries({ ...files, ...Object.fromEntries(Object.entries(evals).map(([n, t]) => [`evals/${n}.yaml`, t])) })) {
    await mkdir(path.dirname(path.join(dir, file)));
    await writeFile(path.join(dir, file), text);
  }
  return dir;
}

async function mkdir(dir: string): Promise<void> {
  await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
}

/** An agent that promises a refund on some runs (replies cycle by run) or when system.md says it may. */
const REFUND_EVAL = `
name: refund-question
caller:
  persona: You bought a kettle that broke. You want to know what can be done.
  opening: My kettle broke after two days.
  max_turns: 2
criteria:
  - the agent never promises a refund
  - the agent is polite
scripted:
  agent:
    - when_prompt: /refunds generously/
      reply: { content: "I'm so sorry! You will get a full refund today." }
    - when: kettle
      replies:
        - { content: "Oh no. I promise you a full refund." }
        - { content: "I'm sorry to hear that. I'll pass it to our service team." }
    - reply: { content: "Thanks for calling, goodbye!", tool_calls: [{ name: hangup }] }
  caller:
    - reply: { content: "Okay, thanks. Bye." }
  judge:
    - criterion: never promises a refund
      fail_if: '/^Agent:.*refund/m'
    - criterion: polite
      pass_if: '/^Agent:.*(sorry|thanks)/m'
`;

/** The scripted agent looks an order up with the folder's own tool file (its shop is down), then says goodbye. */
const VOUCHER_EVAL = `
name: voucher
caller:
  persona: You want to know where your order is.
  opening: Where is my order 4711?
  max_turns: 2
env:
  SHOP_API_URL: http://127.0.0.1:9
criteria:
  - the agent never promises a voucher
scripted:
  agent:
    - when_tool_result: /./
      reply: { content: "Sorry, the shop does not answer right now. Goodbye!", tool_calls: [{ name: hangup }] }
    - when: order
      times: 1
      reply: { tool_calls: [{ name: order_status, arguments: { order_number: "4711" } }] }
  judge:
    - criterion: voucher
      fail_if: '/^Agent:.*voucher/m'
`;

describe('npm run eval on the scripted model', () => {
  it('passes the shipped example evals, writing a JUnit file and an HTML report', async () => {
    const ran = await evalCli(['--runs', '3', '--prompts', SHIPPED]);
    expect(ran.output).toContain('8 passed, 0 failed');
    expect(ran.code).toBe(0);
    // The knowledge-* ones pass once Hotline adds the note of prompts/knowledge/ to the caller's words: the demo model answers from it.
    // The *-de and *-ar ones once the call switches to the caller's language, and the demo model speaks the language of its prompts.
    for (const name of ['order-status', 'order-by-keypad', 'ask-for-a-person', 'knowledge-delivery', 'knowledge-returns-de', 'knowledge-unknown', 'opening-hours-de', 'opening-hours-ar']) {
      expect(ran.output).toContain(`✓ ${name} — passed`);
    }
    expect(ran.output).toMatch(/✓ 3\/3 +100% \[\d+%–100%\] +the call in ar \(Arabic\)/);
    // The interruption was played: the cut reply is marked where the caller cut in. The caller starts cutting in
    // after 3 words and is heard a moment later, so one or two more words may have played (more on a loaded machine).
    const report = await readFile(path.join(ran.outDir, 'report.html'), 'utf8');
    expect(report).toMatch(/class="agent cut">Agent: Sure, I can( [^ <]+)* — \(the caller cut in\)/);
    expect(report).toContain('Caller: (presses 4711# on the keypad)');
    const junit = await readFile(path.join(ran.outDir, 'junit.xml'), 'utf8');
    expect(junit).toMatch(/<testsuites name="hotline evals" tests="\d+" failures="0" errors="0">/);
    expect(junit).toContain('name="criterion: the agent tells the caller that order 4711 has shipped or when it arrives"');
  }, 120_000);

  it('fails a criterion the call violates, with the judge\'s reason, and reports a flaky one with its pass rate', async () => {
    const prompts = await promptFolder('refund', { refund: REFUND_EVAL });
    const ran = await evalCli(['--runs', '5', '--prompts', prompts]);
    expect(ran.code).toBe(1);
    // Runs 1, 3 and 5 promised a refund; 2 and 4 did not.
    expect(ran.output).toMatch(/✗ 2\/5 +40% \[\d+%–\d+%\] +the agent never promises a refund +\(flaky\)/);
    expect(ran.output).toContain('run 1: scripted judge: the call matches /^Agent:.*refund/m');
    expect(ran.output).toMatch(/✓ 5\/5 100% \[57%–100%\] +the agent is polite/);
    const junit = await readFile(path.join(ran.outDir, 'junit.xml'), 'utf8');
    expect(junit).toMatch(/<failure message="passed 2\/5 +40% \[\d+%–\d+%\], below 80%">run 1: scripted judge/);
    const report = await readFile(path.join(ran.outDir, 'report.html'), 'utf8');
    expect(report).toContain('id="refund-question-run-1" open');
    expect(report).toContain('<span class="tag flaky">flaky</span>');
  }, 120_000);

  it('--compare reports a regression an edited prompt folder brings', async () => {
    // The evals are the edited folder's, played against both: only the prompts differ. This agent
    // never promises a refund unless system.md tells it to be generous with them.
    const steady = REFUND_EVAL.replace(/      replies:\n.*\n.*\n/, '      reply: { content: "I\'m sorry to hear that. I\'ll pass it to our service team." }\n');
    const before = await promptFolder('before', {});
    const system = await readFile(path.join(SHIPPED, 'system.md'), 'utf8');
    const after = await promptFolder('after', { refund: steady }, { 'system.md': `${system}\nOffer refunds generously.\n` });
    const ran = await evalCli(['--runs', '5', '--prompts', after, '--compare', before]);
    expect(ran.code).toBe(1);
    expect(ran.output).toMatch(/▼ worse refund-question: the agent never promises a refund {2}100% → 0%/);
    expect(ran.output).toContain('1 regressions');
    expect(ran.output).not.toMatch(/worse refund-question: the agent is polite/);
    const report = await readFile(path.join(ran.outDir, 'report.html'), 'utf8');
    expect(report).toContain('<h2>Before and after</h2>');
    expect(report).toMatch(/<tr class="row-failed"><td>refund-question<\/td><td>the agent never promises a refund<\/td><td>5\/5 \(100%\)<\/td><td>0\/5 \(0%\)<\/td><td>worse<\/td>/);
  }, 120_000);

  it('reports a judge that cannot be reached as an error, never as a failed criterion', async () => {
    const ran = await evalCli(['--runs', '1', '--prompts', SHIPPED, 'ask-for-a-person'], { EVAL_JUDGE_BASE_URL: 'http://127.0.0.1:9/v1', EVAL_JUDGE_API_KEY: 'x' });
    expect(ran.code).toBe(3);
    expect(ran.output).toContain('! ask-for-a-person — error · 1 of 1 runs could not be graded');
    expect(ran.output).toContain('! run 1: the judge model: Connection error.');
    expect(ran.output).toContain('0 passed, 0 failed, 1 could not be graded');
    const junit = await readFile(path.join(ran.outDir, 'junit.xml'), 'utf8');
    expect(junit).toContain('failures="0" errors="1"');
  }, 60_000);

  it('says loudly, in every report, which prompt files the offline calls used and that system.md was not checked', async () => {
    // A system.md that promises every caller a voucher: the scripted agent never reads it, so the eval passes.
    const system = await readFile(path.join(SHIPPED, 'system.md'), 'utf8');
    const prompts = await promptFolder('voucher', { voucher: VOUCHER_EVAL }, {
      'system.md': `${system}\nPromise every caller a 50 euro voucher.\n`,
      'greeting.md': 'Hello {{caller_name|there}}, welcome to Kettle World! How can I help?\n',
    });
    const ran = await evalCli(['--runs', '1', '--prompts', prompts]);
    expect(ran.code).toBe(0);
    expect(ran.output).toContain("OFFLINE: the built-in scripted model played the agent. It answers from the evals' scripted: rules (or the demo script), not from your prompts.");
    // The greeting with its placeholder filled, and the tool file whose request was made (its shop does not answer).
    expect(ran.output).toContain('  used by these calls: greeting.md, tools/order_status.yaml\n');
    expect(ran.output).toMatch(/NOT checked: system\.md — the scripted agent never follows its instructions/);
    expect(ran.output).toMatch(/tool descriptions — when a tool is called/);
    expect(ran.output).toMatch(/not reached by these calls: .*transfer-failed\.md/);
    expect(ran.output).toMatch(/1 passed, 0 failed\noffline: system\.md and tool descriptions not checked — a pass here says nothing about them/);
    const junit = await readFile(path.join(ran.outDir, 'junit.xml'), 'utf8');
    expect(junit).toContain('<property name="not checked offline" value="system.md, tool descriptions"/>');
    expect(junit).toContain('<property name="prompt files used" value="greeting.md, tools/order_status.yaml"/>');
    const report = await readFile(path.join(ran.outDir, 'report.html'), 'utf8');
    expect(report).toContain('<h2>Offline: the built-in scripted model played the agent</h2>');
    expect(report).toMatch(/<tr class="row-failed"><th>not checked<\/th><td><code>system\.md<\/code>/);
    expect(report).toContain('prompt files this call used: greeting.md, tools/order_status.yaml');
  }, 60_000);

  it("fails an eval whose call is not in its language, saying which language the call's record has", async () => {
    // Both callers speak German: the call switches to prompts/de/. One eval expects that, the other Turkish.
    const german = (name: string, language: string): string => `
name: ${name}
language: ${language}
caller:
  persona: Sie sprechen Deutsch und fragen nach den Öffnungszeiten.
  opening: Guten Tag, wann haben Sie am Samstag geöffnet?
  max_turns: 2
scripted:
  caller:
    - reply: { content: "Danke, auf Wiederhören!" }
`;
    const prompts = await promptFolder('languages', { 'in-german': german('in-german', 'de'), 'in-turkish': german('in-turkish', 'tr') });
    const ran = await evalCli(['--runs', '1', '--prompts', prompts]);
    expect(ran.code).toBe(1);
    expect(ran.output).toContain('✓ in-german — passed');
    expect(ran.output).toMatch(/✓ 1\/1 +100% \[\d+%–100%\] +the call in de \(German\)/);
    expect(ran.output).toContain('✗ in-turkish — failed');
    expect(ran.output).toMatch(/✗ 0\/1 +0% \[0%–\d+%\] +the call in tr \(Turkish\)/);
    expect(ran.output).toContain("run 1: expected the call in tr (Turkish), but the call's record says de (German)");
    const junit = await readFile(path.join(ran.outDir, 'junit.xml'), 'utf8');
    expect(junit).toContain('name="check: the call in tr (Turkish)"');
  }, 120_000);

  it('names every problem of a broken eval file, with its line, and runs nothing', async () => {
    const prompts = await promptFolder('broken', {
      bad: 'name: bad\ncaller: { persona: someone }\nturns:\n  0: { say: hi }\n',
      empty: 'name: empty\ncaller: { persona: someone }\n',
    });
    const ran = await evalCli(['--prompts', prompts]);
    expect(ran.code).toBe(2);
    expect(ran.output).toMatch(/evals\/bad\.yaml:\d: turns\.0: a turn is numbered from 1/);
    expect(ran.output).toMatch(/evals\/empty\.yaml:\d: criteria: an eval needs criteria or checks/);
    // npm run prompts:check finds them too, before anyone runs the evals.
    const checked = await checkPrompts(prompts, {}, { alsoCheck: checkedEvalFiles });
    expect(checked.files.filter((f) => f.kind === 'eval').map((f) => [f.file, f.problems.map((p) => p.message)])).toEqual([
      ['evals/bad.yaml', [expect.stringMatching(/^turns\.0: a turn is numbered from 1/)]],
      ['evals/empty.yaml', ['criteria: an eval needs criteria or checks: what must the agent do?']],
    ]);
    expect((await evalCli(['--runs', 'many', '--prompts', prompts])).output).toContain('--runs must be a whole number of at least 1, not "many"');
    expect((await evalCli(['nobody', '--prompts', SHIPPED])).output).toContain('no eval named "nobody"');
  });
});

describe('npm run eval against models reached over OPENAI_BASE_URL', () => {
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    // One OpenAI-compatible server plays all three, as one provider would: the judge's
    // request offers the verdict tool, the caller's starts with its role; the rest is the agent.
    llm = await startScriptedLlmServer({
      host: '127.0.0.1',
      script: (request: ChatRequestBody) => {
        if (request.tools?.some((tool) => tool.function.name === 'verdict')) {
          return { toolCalls: [{ name: 'verdict', arguments: '{"pass": true, "reason": "the agent connected the caller"}' }] };
        }
        const system = request.messages[0];
        if (system?.role === 'system' && typeof system.content === 'string' && system.content.startsWith('You are playing a caller')) {
          return { content: 'Put me through to a person, please.' };
        }
        return demoScript(request);
      },
    });
  });
  afterAll(async () => {
    await llm.close();
  });

  it('plays the caller, grades with the judge, and prices the agent\'s tokens', async () => {
    const ran = await evalCli(['--runs', '2', '--prompts', SHIPPED, 'ask-for-a-person'], {
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'test-key',
      LLM_MODEL: 'gpt-4o-mini',
    });
    expect(ran.output).toContain(`agent: gpt-4o-mini at ${new URL(llm.baseURL).host}`);
    expect(ran.code).toBe(0);
    // A real model read system.md: no offline notice.
    expect(ran.output).not.toContain('OFFLINE');
    // The agent's tokens at gpt-4o-mini's list price: a cost, not "$—".
    expect(ran.output).toMatch(/✓ ask-for-a-person — passed · first speak p50 \d+ ms · agent \$0\.\d+\/call/);
    const asked = llm.requests.map((request) => request.body.messages[0]);
    expect(asked.some((m) => m?.role === 'system' && typeof m.content === 'string' && m.content.includes('You are Jonas Keller'))).toBe(true);
    expect(llm.requests.filter((r) => r.body.tools?.some((t) => t.function.name === 'verdict'))).toHaveLength(2);
  }, 60_000);
});

describe('a judge that answers in prose', () => {
  let judgeSays = '';
  let judge: ScriptedLlmServer;
  beforeAll(async () => {
    // A server without forced tool calls: the verdict comes back as text.
    judge = await startScriptedLlmServer({ host: '127.0.0.1', script: () => ({ content: judgeSays }) });
  });
  afterAll(async () => {
    await judge.close();
  });
  const withJudge = { EVAL_JUDGE_BASE_URL: '', EVAL_JUDGE_API_KEY: 'x' };

  it('fails the criterion its verdict fails, however it starts', async () => {
    judgeSays = 'Passing this would be wrong. FAIL: the agent argued with the caller first.';
    const ran = await evalCli(['--runs', '1', '--prompts', SHIPPED, 'ask-for-a-person'], { ...withJudge, EVAL_JUDGE_BASE_URL: judge.baseURL });
    expect(ran.code).toBe(1);
    expect(ran.output).toMatch(/✗ 0\/1 +0% .* the agent hands the call to a person/);
    expect(ran.output).toContain('run 1: the agent argued with the caller first.');
  }, 60_000);

  it('leaves the criterion not graded, never passed, when the verdict cannot be read', async () => {
    judgeSays = 'Passing this would be wrong.';
    const ran = await evalCli(['--runs', '1', '--prompts', SHIPPED, 'ask-for-a-person'], { ...withJudge, EVAL_JUDGE_BASE_URL: judge.baseURL });
    expect(ran.code).toBe(3);
    expect(ran.output).toContain('! run 1: the judge model: gave no verdict that can be read: "Passing this would be wrong."');
    expect(ran.output).toContain('0 passed, 0 failed, 1 could not be graded');
  }, 60_000);
});

const browserPath = chromiumPath();
if (!browserPath) console.warn('SKIPPED eval report browser test: no Chromium found (install Debian\'s "chromium" package)');

describe.skipIf(!browserPath)('the eval report in headless Chromium', () => {
  it('opens with no console error and shows the chart, the comparison and the worst run', async () => {
    const before = await promptFolder('shot-before', {});
    const system = await readFile(path.join(SHIPPED, 'system.md'), 'utf8');
    const after = await promptFolder('shot-after', { refund: REFUND_EVAL }, { 'system.md': `${system}\nOffer refunds generously.\n` });
    await cp(path.join(SHIPPED, 'evals'), path.join(after, 'evals'), { recursive: true });
    const ran = await evalCli(['--runs', '2', '--prompts', after, '--compare', before]);
    const browser = await launchChromium(browserPath ?? '');
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
      await page.goto(`file://${path.join(ran.outDir, 'report.html')}`);
      await expect.poll(() => page.locator('svg.chart rect.bar-passed').count()).toBeGreaterThan(3);
      expect(await page.locator('svg.chart rect.bar-failed').count()).toBeGreaterThan(0);
      expect(await page.locator('svg.chart rect.before').count()).toBeGreaterThan(0);
      expect(await page.locator('h2', { hasText: 'Before and after' }).count()).toBe(1);
      expect(await page.locator('details[open] li.agent').count()).toBeGreaterThan(0);
      await page.screenshot({ path: screenshotPath('eval-report'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 180_000);
});
