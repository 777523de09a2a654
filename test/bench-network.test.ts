/**
 * The bench's network phase (issue 24), in a tiny configuration: a 10 ms round trip, 300 ms
 * between turns, 2 calls × 2 turns, through the delaying proxy (it needs no root), and through
 * a network namespace with netem where one can be made here. Hotline runs from its sources (a
 * build would take longer than the whole test) in an empty folder, with an environment of its
 * own: neither the developer's environment nor .env reaches it.
 */
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { now } from '../bench/clock.js';
import { DelayProxy } from '../bench/delay-proxy.js';
import type { ModelRequestRecord } from '../bench/far-side-messages.js';
import { turnKind, type TurnRecord } from '../bench/network-calls.js';
import { networkFigures, type TurnGroup } from '../bench/network-figures.js';
import { LinkUnavailable, namespaceLink } from '../bench/network-link.js';
import { decide, networkTag, plainAnswer, TOOL_NAME } from '../bench/network-script.js';
import { measureNetwork, type NetworkOptions, type NetworkResult } from '../bench/network.js';
import { machine, render } from '../bench/report.js';

const TINY: NetworkOptions = {
  rttMs: 10,
  gapMs: { min: 300, max: 300 },
  calls: 2,
  turns: 2,
  ttftMs: 100,
  tokenDelayMs: 5,
  msPerChar: 1,
  seed: 1,
  link: 'proxy',
  serverKeepAliveMs: 400_000,
  keepAliveHint: false,
  hotlineFromSource: true,
  progress: () => undefined,
};

/** Whether this machine can make the namespace link (root, ip, tc and the kernel's netem): tried, and removed at once. */
async function namespaceAvailable(): Promise<boolean> {
  try {
    await (await namespaceLink(10)).close();
    return true;
  } catch (error) {
    if (error instanceof LinkUnavailable) return false;
    throw error;
  }
}

function expectPlausible(group: TurnGroup, turns: number, requestsPerTurn: { min: number; max: number }): void {
  expect(group.turns).toBe(turns);
  for (const count of [group.turnsOnNewConnection, group.modelRequests, group.modelRequestsOnNewConnection]) {
    expect(Number.isInteger(count)).toBe(true);
    expect(count).toBeGreaterThanOrEqual(0);
  }
  expect(group.turnsOnNewConnection).toBeLessThanOrEqual(turns);
  expect(group.modelRequests).toBeGreaterThanOrEqual(turns * requestsPerTurn.min);
  expect(group.modelRequests).toBeLessThanOrEqual(turns * requestsPerTurn.max);
  expect(group.modelRequestsOnNewConnection).toBeLessThanOrEqual(group.modelRequests);
  expect(group.overheadMs.count).toBe(turns);
  for (const figure of [group.overheadMs.p50, group.overheadMs.p95, group.overheadMs.max]) {
    expect(Number.isFinite(figure)).toBe(true);
    // Above the warm baseline by more than a few handshakes would be a broken measurement, not a slow Hotline.
    expect(Math.abs(figure)).toBeLessThan(5_000);
  }
  // The request cannot reach the model before half a round trip has passed.
  expect(group.requestArrivedMs.p50).toBeGreaterThanOrEqual(TINY.rttMs / 2 - 1);
}

function expectPhasePlausible(result: NetworkResult): void {
  const { baseline } = result;
  // The warm client's round trip is the link's, give or take the timers and a busy machine.
  expect(baseline.roundTripMs.p50).toBeGreaterThanOrEqual(TINY.rttMs - 1);
  expect(baseline.roundTripMs.p50).toBeLessThan(TINY.rttMs + 200);
  // The model's first token: its scripted delay plus one round trip.
  expect(baseline.plainFirstTokenMs.p50).toBeGreaterThanOrEqual(TINY.ttftMs + TINY.rttMs - 1);
  expect(baseline.plainFirstSentenceMs.p50).toBeGreaterThan(baseline.plainFirstTokenMs.p50);
  expect(baseline.toolFirstSentenceMs.p50).toBeGreaterThan(baseline.plainFirstSentenceMs.p50);
  // Every call's first turn is first; one turn per call after it. A turn asks the model once, a tool turn twice.
  expectPlausible(result.turns.first, TINY.calls, { min: 1, max: 2 });
  expectPlausible(result.turns.later, TINY.calls * (TINY.turns - 1), { min: 1, max: 2 });
  // Nothing was open to the model before the first turn of the first call.
  expect(result.turns.first.turnsOnNewConnection).toBeGreaterThanOrEqual(1);
  // With 2 calls × 2 turns, each call has exactly one tool turn (turnKind alternates).
  const business = result.business;
  expect(business.first.requests).toBe(TINY.calls);
  expect(business.later.requests).toBe(0);
  expect(business.first.requestsOnNewConnection).toBeGreaterThanOrEqual(1);
  expect(business.first.requestsOnNewConnection).toBeLessThanOrEqual(business.first.requests);
  expect(Number.isFinite(business.first.delayMs.p50)).toBe(true);
  expect(result.timedOut).toBe(0);
  expect(result.toolTurnsWithoutCall).toBe(0);
  const text = render({ machine: machine(), options: {}, startedAt: '', durationS: 1, network: result, targets: [] });
  expect(text).toContain(`9. Network: the model and a business system over TLS, ${TINY.rttMs} ms round trip, 2 calls × 2 turns`);
  expect(text).toContain('first turn of a call');
  expect(text).toContain("a call's first tool turn");
}

const netnsHere = await namespaceAvailable();

describe('the network phase', () => {
  it('measures the overhead and counts new connections through the delaying proxy', async () => {
    const result = await measureNetwork(TINY);
    expect(result.link.kind).toBe('proxy');
    expectPhasePlausible(result);
  }, 40_000);

  it.skipIf(!netnsHere)('and across a network namespace with netem', async () => {
    const result = await measureNetwork({ ...TINY, link: 'netns' });
    expect(result.link.kind).toBe('netns');
    expectPhasePlausible(result);
  }, 40_000);
});

describe('the delaying proxy', () => {
  let echo: Server;
  beforeAll(async () => {
    echo = createServer((socket) => socket.pipe(socket));
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
  });
  afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

  it('holds a new connection\'s first bytes for the handshake, then takes one round trip per exchange', async () => {
    const rtt = 40;
    const proxy = await DelayProxy.start({ host: '127.0.0.1', port: (echo.address() as AddressInfo).port }, rtt);
    try {
      // Timed from the connect call, as a client pays it: the proxy holds the first bytes from the moment it
      // accepted the connection, which under load may come well before this process hears 'connect'.
      const opened = now();
      const socket = connect(proxy.port, '127.0.0.1');
      await once(socket, 'connect');
      const exchange = async (from = now()): Promise<number> => {
        socket.write('ping');
        await once(socket, 'data');
        return now() - from;
      };
      // TCP's round trip, then the bytes' own.
      const first = await exchange(opened);
      expect(first).toBeGreaterThanOrEqual(2 * rtt - 2);
      const second = await exchange();
      expect(second).toBeGreaterThanOrEqual(rtt - 2);
      expect(second).toBeLessThan(first);
      socket.destroy();
    } finally {
      await proxy.close();
    }
  });
});

describe('the network figures', () => {
  const record = (call: number, turn: number, tag: string, sentAt: number, firstSpeakAt: number): TurnRecord => ({
    call,
    turn,
    kind: turnKind(call, turn),
    tag,
    sentAt,
    firstSpeakAt,
    speaks: 3,
    otherSpeaks: 0,
    timedOut: false,
  });
  const model = (
    tag: string | undefined,
    role: ModelRequestRecord['role'],
    connectionRequests: number,
    receivedAt: number,
    endedAt = receivedAt + 500,
    firstSentenceAt: number | undefined = role === 'tool-call' ? undefined : receivedAt + 300,
  ): ModelRequestRecord => ({
    kind: 'model',
    role,
    tag,
    toolOffered: true,
    connectionRequests,
    receivedAt,
    firstTokenAt: undefined,
    firstSentenceAt,
    endedAt,
    outcome: 'completed',
  });

  it('takes each turn, less the far side’s own time in it, against the warm client’s share of its kind, and counts requests on new connections by turn', () => {
    // Call 0: a plain turn, then a tool turn; call 1: a tool turn, then a plain turn.
    const turns = [record(0, 0, 'Nwaaaa', 0, 600), record(0, 1, 'Nwaaab', 10_000, 11_300), record(1, 0, 'Nwaaac', 0, 1_500), record(1, 1, 'Nwaaad', 10_000, 10_412)];
    const figures = networkFigures({
      turns,
      model: [
        model('Nwaaaa', 'answer', 0, 100),
        model('Nwaaab', 'tool-call', 0, 10_050, 10_500),
        model('Nwaaab', 'tool-answer', 1, 10_600),
        model('Nwaaac', 'tool-call', 0, 100, 600),
        model('Nwaaac', 'tool-answer', 0, 800),
        // Its first sentence took the model 2 ms longer than usual: not Hotline's time.
        model('Nwaaad', 'answer', 3, 10_030, 10_530, 10_332),
        model(undefined, 'untraced', 0, 5),
        // The warm client's samples: the model 300 ms to a plain first sentence; a tool turn 400 + 1 + 300.
        model('Nwzzzz', 'answer', 1, 20_000),
        model('Nwzzzy', 'tool-call', 1, 21_000, 21_400),
        model('Nwzzzy', 'tool-answer', 2, 21_500),
      ],
      business: [
        { kind: 'business', tag: 'Nwaaab', connectionRequests: 2, receivedAt: 10_560, answeredAt: 10_561 },
        { kind: 'business', tag: 'Nwaaac', connectionRequests: 0, receivedAt: 700, answeredAt: 701 },
        { kind: 'business', tag: 'Nwzzzy', connectionRequests: 1, receivedAt: 21_450, answeredAt: 21_451 },
      ],
      warm: [
        // The warm client's share: 400 − 300 for a plain turn, 1,000 − 701 for a tool turn.
        { kind: 'plain', tag: 'Nwzzzz', firstSentenceMs: 400, firstTokenMs: 350, warm: true },
        { kind: 'plain', tag: 'Nwzzzx', firstSentenceMs: 9_999, firstTokenMs: 9_999, warm: false },
        { kind: 'tool', tag: 'Nwzzzy', firstSentenceMs: 1_000, firstTokenMs: 350, warm: true },
      ],
      roundTrips: [{ ms: 50, warm: true }],
      shift: 0,
    });
    expect(figures.baseline.plainFirstSentenceMs.p50).toBe(400);
    expect(figures.baseline.coldSamples).toBe(1);
    // First turns: plain 600 − 300 − 100, tool 1,500 − (500 + 1 + 300) − 299.
    expect(figures.turns.first.overheadMs).toMatchObject({ count: 2, p50: 200, max: 400 });
    expect(figures.turns.first).toMatchObject({ turns: 2, turnsOnNewConnection: 2, modelRequests: 3, modelRequestsOnNewConnection: 3 });
    // Later: tool 1,300 − (450 + 1 + 300) − 299, plain 412 − 302 − 100; the tool turn opened one connection for its tool call.
    expect(figures.turns.later.overheadMs).toMatchObject({ count: 2, p50: 10, max: 250 });
    expect(figures.perTurn.find((turn) => turn.turn === 1 && turn.kind === 'plain')).toMatchObject({ serviceMs: 302, overheadMs: 10 });
    expect(figures.turns.later).toMatchObject({ turnsOnNewConnection: 1, modelRequests: 3, modelRequestsOnNewConnection: 1 });
    expect(figures.turns.later.requestArrivedMs.p50).toBe(30);
    // Call 1's tool turn is its first tool turn, and call 0's too (its turn 1): each call's first.
    expect(figures.business.first).toMatchObject({ requests: 2, requestsOnNewConnection: 1 });
    // Tool call written whole → business request, minus the 50 ms round trip: 60 − 50 and 100 − 50.
    expect(figures.business.first.delayMs).toMatchObject({ p50: 10, max: 50 });
    expect(figures.business.later.requests).toBe(0);
    expect(figures.toolTurnsWithoutCall).toBe(0);
  });
});

describe('the scripted conversation', () => {
  it('calls the tool in a tool turn only when it is offered, and answers the rest', () => {
    const tag = networkTag(7);
    const tools = [{ type: 'function' as const, function: { name: TOOL_NAME } }];
    expect(decide({ model: 'm', messages: [{ role: 'user', content: `Where is my order ${tag}?` }], tools })).toMatchObject({ role: 'tool-call', tag });
    expect(decide({ model: 'm', messages: [{ role: 'user', content: `Where is my order ${tag}?` }] })).toMatchObject({ role: 'answer', toolOffered: false });
    expect(decide({ model: 'm', messages: [{ role: 'user', content: `Can you move my appointment ${tag} to Thursday?` }], tools }).reply.content).toBe(plainAnswer(tag));
    expect(decide({ model: 'm', messages: [{ role: 'user', content: 'Hello?' }] }).role).toBe('untraced');
  });
});
