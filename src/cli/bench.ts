/**
 * Hotline's benchmark: Hotline on a thread of its own, a scripted
 * OpenAI-compatible LLM server and the callers on the main thread (or the LLM
 * server on a third with --llm-thread), calls driven over real WebSockets (and
 * HTTP for the webhook) as the voice service drives them, on 127.0.0.1 only.
 * The callers and the LLM server stand in for other hosts, so their threads
 * give way to Hotline's at the lowest CPU priority (--same-priority keeps them
 * level, to see what sharing two cores with them costs). Prints a table and,
 * with --out, writes the same figures as JSON. Not part of `npm test`.
 *
 *   npm run bench -- [--quick] [--only first-speak,barge-in,capacity,webhook] [--out bench.json] [--llm-thread] [--same-priority]
 *                    [--ttft-ms 300] [--tokens-per-second 60] [--calls 1,100,1000] [--turns N]
 *                    [--think-ms 500] [--ms-per-char 5] [--barge-ins 10000] [--barge-in-calls 200]
 *                    [--idle-calls 2000] [--target-talking 200] [--event-loop-calls 500]
 *                    [--ladder-budget-s 90] [--webhook-seconds 5] [--seed 1]
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { runBargeIns, type BargeInResult } from '../bench/barge-in.js';
import {
  climbLadder,
  measureEventLoop,
  measureMemory,
  measureTarget,
  type CapacityOptions,
  type CapacityResult,
} from '../bench/capacity.js';
import { measureLevel, type FirstSpeakLevel } from '../bench/first-speak.js';
import { now } from '../bench/clock.js';
import { BenchFixture } from '../bench/llm-fixture.js';
import { evaluateTargets, firstSpeakNote, machine, render, type BenchResults } from '../bench/report.js';
import { parseCounts } from '../bench/stats.js';
import { warmUp } from '../bench/warm-up.js';
import { runWebhook, type WebhookResult } from '../bench/webhook.js';

const PHASES = ['first-speak', 'barge-in', 'capacity', 'webhook'] as const;
type Phase = (typeof PHASES)[number];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'llm-thread': { type: 'boolean', default: false },
    'same-priority': { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
    'ttft-ms': { type: 'string', default: '300' },
    'tokens-per-second': { type: 'string', default: '60' },
    calls: { type: 'string' },
    turns: { type: 'string' },
    'think-ms': { type: 'string', default: '500' },
    'ms-per-char': { type: 'string', default: '5' },
    'barge-ins': { type: 'string' },
    'barge-in-calls': { type: 'string' },
    'idle-calls': { type: 'string' },
    'target-talking': { type: 'string' },
    'event-loop-calls': { type: 'string' },
    'ladder-budget-s': { type: 'string' },
    'webhook-seconds': { type: 'string' },
    seed: { type: 'string', default: '1' },
  },
});

const quick = values.quick;
const pick = (given: string | undefined, full: number, small: number): number => (given === undefined ? (quick ? small : full) : Number(given));

const phases = new Set<Phase>();
for (const name of (values.only ?? PHASES.join(',')).split(',').map((s) => s.trim())) {
  if (!(PHASES as readonly string[]).includes(name)) {
    console.error(`unknown phase "${name}"; choose from ${PHASES.join(', ')}`);
    process.exit(2);
  }
  phases.add(name as Phase);
}

const ttftMs = Number(values['ttft-ms']);
const tokensPerSecond = Number(values['tokens-per-second']);
const tokenDelayMs = 1000 / tokensPerSecond;
const thinkMs = Number(values['think-ms']);
const msPerChar = Number(values['ms-per-char']);
const seed = Number(values.seed);
const levels = parseCounts(values.calls ?? (quick ? '1,50' : '1,100,1000'));
const turnsOverride = values.turns === undefined ? undefined : Number(values.turns);
// Few turns at high counts keep the run in budget; one call needs more turns for a stable median.
const turnsFor = (calls: number): number => turnsOverride ?? (quick ? (calls === 1 ? 2 : 1) : calls === 1 ? 12 : calls <= 200 ? 4 : 2);
const bargeIns = pick(values['barge-ins'], 10_000, 300);
const bargeInCalls = pick(values['barge-in-calls'], 200, 100);
const idleCalls = pick(values['idle-calls'], 2000, 300);
const targetTalking = pick(values['target-talking'], 200, 30);
const eventLoopCalls = pick(values['event-loop-calls'], 500, 100);
const ladderBudgetS = pick(values['ladder-budget-s'], 90, 6);
const webhookSeconds = pick(values['webhook-seconds'], 5, 1);
const openPerSecond = 400;
const turnTimeoutMs = 60_000;

const numeric: Record<string, number> = {
  'ttft-ms': ttftMs,
  'tokens-per-second': tokensPerSecond,
  'think-ms': thinkMs,
  'ms-per-char': msPerChar,
  seed,
  turns: turnsOverride ?? 1,
  'barge-ins': bargeIns,
  'barge-in-calls': bargeInCalls,
  'idle-calls': idleCalls,
  'target-talking': targetTalking,
  'event-loop-calls': eventLoopCalls,
  'ladder-budget-s': ladderBudgetS,
  'webhook-seconds': webhookSeconds,
};
for (const [flag, value] of Object.entries(numeric)) {
  if (!Number.isFinite(value) || value < 0 || (flag === 'tokens-per-second' && value === 0)) {
    console.error(`--${flag} must be a non-negative number`);
    process.exit(2);
  }
}

// However the machine behaves, the run ends.
setTimeout(() => {
  console.error('bench: still running after 15 minutes; giving up');
  process.exit(3);
}, 15 * 60_000).unref();

const progress = (message: string): void => {
  process.stderr.write(`[${((now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);
};

const startedAt = now();
const startedIso = new Date().toISOString();
const llmThread = values['llm-thread'];
const samePriority = values['same-priority'];
const fixture = await BenchFixture.start({ ttftMs, tokenDelayMs, llmThread, yieldCpu: !samePriority });
const talk = { openPerSecond, thinkMs, msPerChar, seed, turnTimeoutMs };

let firstSpeak: FirstSpeakLevel[] | undefined;
let bargeIn: BargeInResult | undefined;
let bargeInLowLoad: BargeInResult | undefined;
let capacity: CapacityResult | undefined;
let webhook: WebhookResult | undefined;

try {
  const capacityOptions: CapacityOptions = {
    idleCalls,
    openPerSecond: quick ? 1000 : 500,
    talk: { ...talk, turns: quick ? 1 : 3 },
    targetTalking,
    eventLoopCalls,
    ladderStart: quick ? 50 : 100,
    ladderLimitMs: 10,
    ladderBudgetS,
  };

  if (phases.has('capacity')) {
    // Memory first, on a heap the other phases have not grown yet.
    progress(`capacity: opening ${idleCalls} idle calls for the memory measurement`);
    const { memory, idle } = await measureMemory(fixture, capacityOptions);
    try {
      progress('warming up');
      await warmUp(fixture, { calls: quick ? 20 : 50, turns: quick ? 5 : 10, seed });
      progress(`capacity: ${targetTalking} calls talking among ${idleCalls} open`);
      const target = await measureTarget(fixture, idle, capacityOptions);
      capacity = { memory, target: target.level, targetOpen: target.open, eventLoop: undefined, ladder: [], maxTalkingUnderLimit: 0, ladderStop: 'not run' };
    } finally {
      await idle.close();
    }
  } else {
    progress('warming up');
    await warmUp(fixture, { calls: quick ? 20 : 50, turns: quick ? 5 : 10, seed });
  }

  if (phases.has('first-speak')) {
    firstSpeak = [];
    for (const calls of levels) {
      progress(`first-speak: ${calls} calls × ${turnsFor(calls)} turns`);
      firstSpeak.push(await measureLevel(fixture, { ...talk, calls, turns: turnsFor(calls), idPrefix: `fs${calls}` }));
    }
  }

  if (phases.has('barge-in')) {
    // The same at low load first: the floor of the abort latency, for comparison.
    const lowCalls = quick ? 3 : 10;
    const lowPerCall = quick ? 3 : 10;
    progress(`barge-in: ${lowCalls * lowPerCall} interruptions over ${lowCalls} calls`);
    bargeInLowLoad = await runBargeIns(fixture, {
      trials: lowCalls * lowPerCall,
      calls: lowCalls,
      trialsPerCall: lowPerCall,
      openPerSecond,
      msPerChar,
      tokenDelayMs,
      seed,
      idPrefix: 'barge-low',
    });
    progress(`barge-in: ${bargeIns} interruptions over ${bargeInCalls} calls`);
    bargeIn = await runBargeIns(fixture, {
      trials: bargeIns,
      calls: bargeInCalls,
      trialsPerCall: 10,
      openPerSecond,
      msPerChar,
      tokenDelayMs,
      seed,
      idPrefix: 'barge',
    });
  }

  if (capacity) {
    progress(`capacity: event-loop delay with ${eventLoopCalls} calls talking`);
    capacity.eventLoop = await measureEventLoop(fixture, capacityOptions);
    progress('capacity: talking calls ladder');
    Object.assign(capacity, await climbLadder(fixture, capacityOptions));
  }

  if (phases.has('webhook')) {
    progress('webhook');
    webhook = await runWebhook(fixture, {
      loops: 16,
      durationMs: webhookSeconds * 1000,
      sessions: quick ? 4 : 20,
      turns: quick ? 2 : 5,
      msPerChar: 2,
      thinkMs: 200,
      seed,
    });
  }
} finally {
  await fixture.close();
}

const partial: Omit<BenchResults, 'targets'> = {
  machine: machine(),
  options: {
    quick,
    only: [...phases].join(','),
    llmThread,
    // The callers' (and LLM server's) CPU priority as a nice value: 19 when they gave way to Hotline.
    callersNice: fixture.callersNice ?? 'same',
    ttftMs,
    tokensPerSecond,
    tokenDelayMs: Number(tokenDelayMs.toFixed(2)),
    thinkMs,
    msPerChar,
    calls: levels.join(','),
    seed,
    bargeIns,
    bargeInCalls,
    idleCalls,
    targetTalking,
    eventLoopCalls,
    ladderBudgetS,
    webhookSeconds,
  },
  startedAt: startedIso,
  durationS: (now() - startedAt) / 1000,
  ...(firstSpeak ? { firstSpeak: { note: firstSpeakNote(fixture.callersNice), levels: firstSpeak } } : {}),
  ...(bargeIn ? { bargeIn } : {}),
  ...(bargeInLowLoad ? { bargeInLowLoad } : {}),
  ...(capacity ? { capacity } : {}),
  ...(webhook ? { webhook } : {}),
};
const results: BenchResults = { ...partial, targets: evaluateTargets(partial) };
console.log(render(results));
if (values.out) {
  await writeFile(values.out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nJSON written to ${values.out}`);
}
