/**
 * A campaign across three Hotline processes on one PostgreSQL, one of them killed (SIGKILL) midway
 * and started again under its own REPLICA_ID: nobody reached is called twice, nobody is skipped,
 * the concurrency holds across the replicas together, and every call's report is accepted once.
 *
 * The voice service is played here: it takes each dial request, counts the calls it has under way
 * (dialled and not yet over for the person called), and has the person pick up at once — on
 * whichever live replica a round-robin balancer sends the call to, as the service's one URL would —
 * hear the greeting, say one line, hear the answer and hang up.
 *
 * The kill is set up so that it always leaves the same things behind: calls on the victim's line
 * (cut off; a live replica records them and settles their contacts once the victim is dead to it),
 * calls the victim asked for that are still ringing (answered afterwards at a live replica, which
 * holds them from then on: neither the victim's death nor its restart may settle them), and a report
 * delivery in flight (its receiver holds it unanswered; it goes out again, under the same id, after
 * the kill). The victim is started again only once the others have settled what it left, and the
 * calls answered meanwhile stay on the line until it is back, so the campaign is still under way then.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { startScriptedLlmServer } from '../src/llm/scripted-server.js';
import { startFakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { adminApi } from './helpers/admin-api.js';
import { CHILD_TEST_TIMEOUT_MS } from './helpers/child-process.js';
import { campaignReplicaEnv, startReplica, type StartedReplica } from './helpers/replica.js';
import { startReportReceiver, type ReceivedReport, type ReportReceiver } from './helpers/report-receiver.js';
import { freshStoreLocation, postgresReachable } from './helpers/stores.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ADMIN = 'admin-secret-1';
const REPORT_SECRET = 'report-secret-1';
const IDS = ['r1', 'r2', 'r3'] as const;
type ReplicaId = (typeof IDS)[number];
const VICTIM: ReplicaId = 'r2';
const CONTACTS = 200;
const CONCURRENCY = 10;
/** Calls ended the normal way before the kill is prepared: about a third of the list. */
const KILL_AFTER = 70;
/** What the kill leaves in flight, made sure of before it: calls on the victim's line, its dials still ringing. */
const HELD_ON_LINE = 2;
const HELD_RINGING = 2;

const number = (i: number): string => `49151200${String(i).padStart(4, '0')}`;
const nameOf = (i: number): string => `Person ${i}`;

/** One dial request as the service received it, and what became of the call. */
interface Dial {
  readonly index: number;
  readonly number: string;
  /** The replica that asked for it (its access token). */
  readonly by: ReplicaId;
  readonly at: number;
  /** The replica the balancer sent the answered call to. */
  host?: ReplicaId;
  line?: FakeVoiceService;
  /** Hotline's first words to the person: they heard it, so they were reached. */
  greeting?: string;
  /** Over for the person: hung up, or the line went dead. */
  over: boolean;
  /** What kept the person from being greeted, for a failure's message. */
  trouble?: string;
}

/**
 * Looks again while `holds` is false: the replicas are other processes, and the store is where they
 * meet, so there is no event to wait on. `what` says what did not happen (with what was found instead).
 */
async function until(holds: () => Promise<boolean> | boolean, what: string | (() => Promise<string>), withinMs = 60_000): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await holds())) {
    if (performance.now() > deadline) throw new Error(`not within ${withinMs} ms: ${typeof what === 'string' ? what : await what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `promise`, or a failure naming `what` (with what was found instead) once `ms` have passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${typeof what === 'string' ? what : what()}`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** `promise`, or undefined once the line is gone: a killed replica sends nothing more. */
function orClosed<T>(line: FakeVoiceService, promise: Promise<T>): Promise<T | undefined> {
  return Promise.race([promise, line.closed.then(() => undefined)]);
}

describe.skipIf(!(await postgresReachable()))('a campaign across three Hotline processes on one PostgreSQL', () => {
  test(
    '200 contacts, concurrency 10, one replica killed (SIGKILL) and started again midway: nobody reached is called twice, nobody skipped, concurrency never exceeded, every report accepted once',
    async () => {
      const place = await freshStoreLocation('postgres');
      cleanups.push(() => place.remove());
      const llm = await startScriptedLlmServer({ script: () => ({ content: 'Schön, dann bis bald.' }), host: '127.0.0.1', ttftMs: 1, tokenDelayMs: 0 });
      cleanups.push(() => llm.close());
      // One receiver per replica: which replica delivered a report is which receiver took it.
      const receivers = new Map<ReplicaId, ReportReceiver>();
      for (const id of IDS) {
        const receiver = await startReportReceiver(REPORT_SECRET);
        cleanups.push(() => receiver.close());
        receivers.set(id, receiver);
      }
      const victimReceiver = receivers.get(VICTIM)!;
      const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
      await db.connect();
      cleanups.push(() => db.end());

      // ---- The voice service ------------------------------------------------------------------
      const replicas = new Map<ReplicaId, StartedReplica>();
      const alive = new Set<ReplicaId>();
      const dials: Dial[] = [];
      const indexOf = new Map(Array.from({ length: CONTACTS }, (_, i) => [number(i), i]));
      /**
       * Calls under way at the service: from the dial request until the call is over for the person (they hang
       * up, or the line goes dead). The runner counts a contact in a call from its claim (`calling`, before the
       * request) until its outcome is written (after the hangup reaches the replica): a wider span around each
       * call, so this count is never above the runner's, and must never be above the concurrency.
       */
      let underWay = 0;
      let mostUnderWay = 0;
      let hungUp = 0;
      let turn = 0;
      let phase: 'run' | 'prepare' | 'killed' = 'run';
      const heldOnLine: Dial[] = [];
      const heldRinging: Dial[] = [];
      /** Calls being put through to the victim and not yet greeted or held: the kill waits for none. */
      let connectingToVictim = 0;
      const watchers = new Set<() => void>();
      const changed = (): void => watchers.forEach((watch) => watch());
      /** Resolves once `holds` is true, looked at after every change the service sees. */
      const when = (holds: () => boolean): Promise<void> =>
        new Promise((resolve) => {
          const watch = (): void => {
            if (!holds()) return;
            watchers.delete(watch);
            resolve();
          };
          watchers.add(watch);
          watch();
        });
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));

      const over = (dial: Dial): void => {
        if (dial.over) return;
        dial.over = true;
        underWay -= 1;
        changed();
      };

      /** The person picks up: the balancer sends the call to the next live replica. */
      const pickUp = async (dial: Dial, hold?: Promise<void>): Promise<void> => {
        const live = IDS.filter((id) => alive.has(id));
        const host = live[turn++ % live.length]!;
        dial.host = host;
        const toVictim = host === VICTIM;
        if (toVictim) connectingToVictim += 1;
        const settle = (): void => {
          if (!toVictim) return;
          connectingToVictim -= 1;
          changed();
        };
        let line: FakeVoiceService;
        try {
          line = await FakeVoiceService.connect(replicas.get(host)!.wsUrl, { playback: { kind: 'auto', msPerChar: 4 } });
        } catch (error) {
          dial.trouble = `${host} refused the call's connection: ${String(error)}`;
          settle();
          return over(dial);
        }
        cleanups.push(() => line.close());
        // A replica killed under the call resets the socket: that is the line going dead, not the test's failure.
        line.socket.on('error', () => undefined);
        dial.line = line;
        void line.closed.then(() => over(dial));
        line.start({ direction: 'outbound', to_phone_number: dial.number, from_phone_number: '4930123456' });
        const greeting = await orClosed(line, line.nextOfType('speak'));
        if (!greeting) {
          dial.trouble = `${host} closed the line before any greeting`;
          return settle();
        }
        dial.greeting = greeting.text ?? '';
        // Whoever waits for greetings looks again: nothing else may change for a while (the calls are held).
        changed();
        if (phase === 'prepare' && host === VICTIM && heldOnLine.length < HELD_ON_LINE) {
          // Stays on the line until the replica dies under it.
          heldOnLine.push(dial);
          return settle();
        }
        settle();
        if (hold) await hold;
        await orClosed(line, line.whenQuiet());
        line.say('Passt gut, danke.');
        const answer = await orClosed(line, line.nextOfType('speak'));
        if (!answer || dial.over) return;
        // Over for the person the moment they hang up: the replica's count may free the place from then on.
        hungUp += 1;
        over(dial);
        line.end('hangup');
        await line.closed;
      };

      const service = await startFakeAiFlowApi({
        defaultFlow: { phoneNumber: true },
        onCall(call) {
          if (call.status !== 201) return;
          const to = String((call.body as { toPhoneNumber: string }).toPhoneNumber);
          const by = /^Bearer token-(r\d)$/.exec(call.headers.authorization ?? '')?.[1] as ReplicaId;
          const dial: Dial = { index: indexOf.get(to) ?? -1, number: to, by, at: performance.now(), over: false };
          dials.push(dial);
          underWay += 1;
          mostUnderWay = Math.max(mostUnderWay, underWay);
          if (phase === 'prepare' && by === VICTIM && heldRinging.length < HELD_RINGING) {
            // Rings on until the replica that asked for it is dead.
            heldRinging.push(dial);
            changed();
            return;
          }
          // While a replica is down, the calls answered stay on the line until it is back: calls outlast a restart, and
          // the campaign is still under way when it returns.
          void pickUp(dial, phase === 'killed' ? released : undefined);
        },
      });
      cleanups.push(() => service.close());

      // ---- Three replicas ---------------------------------------------------------------------
      const envOf = (id: ReplicaId): Record<string, string> => ({
        ...campaignReplicaEnv(place, id, { adminToken: ADMIN, serviceUrl: service.url, llmUrl: llm.baseURL }),
        REPORT_WEBHOOK_URL: receivers.get(id)!.url,
        REPORT_WEBHOOK_SECRET: REPORT_SECRET,
      });
      const start = async (id: ReplicaId): Promise<StartedReplica> => {
        const replica = await startReplica(envOf(id), cleanups);
        replicas.set(id, replica);
        alive.add(id);
        return replica;
      };
      const [first] = await Promise.all(IDS.map(start));

      const contacts = async () =>
        (
          await db.query<{ idx: number; status: string; outcome: string | null; attempts: number; replica: string | null }>(
            'SELECT idx, status, outcome, attempts, replica FROM campaign_contacts ORDER BY idx',
          )
        ).rows;
      const contact = async (i: number) => (await contacts())[i]!;

      const created = await adminApi(first!.url, ADMIN, 'POST', '/api/campaigns', {
        name: 'three replicas',
        contacts: Array.from({ length: CONTACTS }, (_, i) => ({ phone: `+${number(i)}`, name: nameOf(i) })),
        concurrency: CONCURRENCY,
        answer_timeout_seconds: 20,
        // An attempt the kill cut before anyone picked up is tried once more, at once.
        retries: { no_answer: { times: 1, after_minutes: 0 } },
      });
      expect(created.status).toBe(201);

      // ---- The kill ---------------------------------------------------------------------------
      await when(() => hungUp >= KILL_AFTER);
      phase = 'prepare';
      // A report the victim sends from now on gets no answer: it is in flight when the victim dies.
      victimReceiver.status = 0;
      let reportInFlight = false;
      const inFlightReport = victimReceiver.request(victimReceiver.received.length).then(() => (reportInFlight = true));
      await within(
        Promise.all([when(() => heldOnLine.length === HELD_ON_LINE && heldRinging.length === HELD_RINGING), inFlightReport]),
        15_000,
        () =>
          `the victim holding ${HELD_ON_LINE} calls on its line, ${HELD_RINGING} ringing and a report in flight: ` +
          `${heldOnLine.length} on its line, ${heldRinging.length} ringing, report in flight ${reportInFlight}, ${underWay} calls under way`,
      );
      // No call is sent to it any more, and none is half put through: every call on its line has been greeted.
      alive.delete(VICTIM);
      await within(when(() => connectingToVictim === 0), 10_000, () => `the calls being put through to the victim greeted: ${connectingToVictim} still not`);
      const victim = replicas.get(VICTIM)!;
      victim.child.child.kill('SIGKILL');
      await victim.child.exited;
      phase = 'killed';
      // Where each receiver stood: what came after this came after the kill.
      const receivedAtKill = new Map(IDS.map((id) => [id, receivers.get(id)!.received.length]));
      victimReceiver.status = 200;

      // The calls it asked for are answered now, at the live replicas, and stay on the line for a while.
      for (const dial of heldRinging) void pickUp(dial, released);
      // A live replica takes each up from the store (the killed one asked for it); on a loaded machine that may take a few seconds.
      await within(
        when(() => heldRinging.every((dial) => dial.greeting !== undefined)),
        20_000,
        () =>
          `the ringing calls answered at live replicas: ${JSON.stringify(heldRinging.map(({ index, host, greeting, trouble, line }) => ({ index, host, greeting, trouble, session: line?.sessionId })))}; ` +
          `their logs: ${IDS.filter((id) => id !== VICTIM).map((id) => `${id}: ${replicas.get(id)!.child.stdout().split('\n').slice(-15).join('\n')}`).join('\n')}`,
      );
      expect(heldRinging.map((dial) => dial.host)).not.toContain(VICTIM);
      await within(when(() => heldOnLine.every((dial) => dial.over)), 10_000, () => `the lines of the killed replica dead: ${heldOnLine.filter((dial) => !dial.over).length} still open`);

      // Once it is dead to them, a live replica records the calls on its line cut off, and its contacts done.
      const sessionsOnVictim = heldOnLine.map((dial) => dial.line!.sessionId);
      await until(async () => {
        const { rows } = await db.query<{ end_reason: string | null }>('SELECT end_reason FROM calls WHERE session_id = ANY($1)', [sessionsOnVictim]);
        return rows.length === HELD_ON_LINE && rows.every((row) => row.end_reason === 'cut_off');
      }, 'the calls on the killed replica\'s line recorded cut_off by a live one');
      // The same look of a live replica settles them; a few heartbeats are more than enough.
      const onVictimsLine = () => Promise.all(heldOnLine.map((dial) => contact(dial.index)));
      await until(
        async () => (await onVictimsLine()).every((c) => c.status === 'done'),
        async () =>
          `the contacts whose calls were on the killed replica's line settled by a live one: ${JSON.stringify(await onVictimsLine())} (dialled by ${heldOnLine.map((dial) => dial.by).join(', ')})`,
        15_000,
      );
      // The calls it asked for that are on a live replica's line now are that replica's: still in a call.
      for (const dial of heldRinging) expect(await contact(dial.index), `contact ${dial.index}, on ${dial.host}'s line`).toMatchObject({ status: 'reached' });

      // Started again under its own id: what its earlier start left is settled already, the live calls are not its.
      await start(VICTIM);
      const restartedAt = performance.now();
      for (const dial of heldRinging) expect(await contact(dial.index), `contact ${dial.index}, on ${dial.host}'s line`).toMatchObject({ status: 'reached' });
      release();

      await until(async () => (await db.query<{ state: string }>('SELECT state FROM campaigns')).rows[0]?.state === 'done', 'the campaign done', 90_000);

      // ---- What the store says ----------------------------------------------------------------
      const final = await contacts();
      expect(final.filter((c) => c.status !== 'done')).toEqual([]);
      // Everybody was reached in the end: a cut-off call counts as completed, an attempt cut before an answer was tried again.
      expect(final.filter((c) => c.outcome !== 'completed')).toEqual([]);

      // ---- What the service saw ---------------------------------------------------------------
      expect(mostUnderWay).toBeLessThanOrEqual(CONCURRENCY);
      // The limit was reached, not just never approached.
      expect(mostUnderWay).toBe(CONCURRENCY);
      expect(dials.every((dial) => dial.index >= 0)).toBe(true);
      const byContact = Array.from({ length: CONTACTS }, (_, i) => dials.filter((dial) => dial.index === i));
      for (const [i, attempts] of byContact.entries()) {
        // Nobody skipped: every contact was dialled; nobody reached is dialled again; no more than the retry allows.
        expect(attempts.length, `contact ${i} dialled`).toBeGreaterThanOrEqual(1);
        expect(attempts.length, `contact ${i} dialled`).toBeLessThanOrEqual(2);
        expect(attempts.slice(0, -1).filter((dial) => dial.greeting !== undefined), `contact ${i} dialled again after being reached`).toEqual([]);
        // Whoever picked up was greeted as the contact asked for, whichever replica asked and whichever took the call.
        for (const dial of attempts) if (dial.greeting !== undefined) expect(dial.greeting).toContain(`Hi ${nameOf(i)},`);
        expect(final[i]!.attempts, `contact ${i}: attempts counted`).toBeGreaterThanOrEqual(attempts.length);
      }
      // The restarted replica took its part again: the campaign was not over when it came back.
      expect(dials.filter((dial) => dial.by === VICTIM && dial.at > restartedAt).length).toBeGreaterThan(0);

      // ---- The reports ------------------------------------------------------------------------
      const calls = async () => (await db.query<{ call_id: string; session_id: string; end_reason: string | null }>('SELECT call_id, session_id, end_reason FROM calls')).rows;
      await until(async () => (await calls()).every((call) => call.end_reason !== null), 'every call ended in the store');
      const pendingDeliveries = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM deliveries WHERE status <> 'delivered'")).rows[0]!.n);
      /** Every request a receiver answered 2xx, with which replica sent it and whether it came after the kill. */
      const accepted = (): { replica: ReplicaId; report: ReceivedReport; callId: string; sessionId: string; afterKill: boolean }[] =>
        IDS.flatMap((replica) =>
          receivers
            .get(replica)!
            .received.map((report, index) => ({ report, index }))
            .filter(({ report }) => report.status >= 200 && report.status < 300)
            .map(({ report, index }) => {
              const body = JSON.parse(report.body) as { call_id: string; session_id: string };
              return { replica, report, callId: body.call_id, sessionId: body.session_id, afterKill: index >= receivedAtKill.get(replica)! };
            }),
        );
      await until(async () => {
        const reported = new Set(accepted().map((a) => a.callId));
        return (await pendingDeliveries()) === 0 && (await calls()).every((call) => reported.has(call.call_id));
      }, "every call's report delivered");
      const stored = await calls();
      expect(IDS.flatMap((id) => receivers.get(id)!.received).every((r) => r.verified)).toBe(true);
      expect(new Set(accepted().map((a) => a.callId))).toEqual(new Set(stored.map((call) => call.call_id)));
      for (const call of stored) {
        // Before the kill first: the receivers are read one after another, not in the order they were sent to.
        const got = accepted()
          .filter((a) => a.callId === call.call_id)
          .sort((a, b) => Number(a.afterKill) - Number(b.afterKill));
        // One delivery per call: one id, whichever replica sent it.
        expect([...new Set(got.map((g) => g.report.id))], `the deliveries of ${call.session_id}`).toHaveLength(1);
        if (got.length === 1) continue;
        // Accepted twice: allowed only for the one the victim had in flight when it died — the receiver answered
        // it before the kill, the victim never recorded that answer (it was killed between the two), so the
        // delivery was claimed by a dead replica and is sent again, with the same id, after the kill. A receiver
        // deduping by X-Hotline-Delivery takes it once. Any other repeat is a report delivered twice.
        expect(got, `the report of ${call.session_id}, accepted twice`).toHaveLength(2);
        expect(got.map((g) => [g.replica === VICTIM && !g.afterKill, g.afterKill]), `the report of ${call.session_id}, accepted twice`).toEqual([
          [true, false],
          [false, true],
        ]);
      }
      // A report the victim was sending when it died got no answer (its receiver held it): its repeat,
      // under the same id after the kill, is its one acceptance.
      const held = victimReceiver.received.filter((r) => r.status === 0);
      expect(held.length).toBeGreaterThanOrEqual(1);
      for (const report of held) {
        expect(accepted().filter((a) => a.report.id === report.id).map((a) => a.afterKill), `delivery ${report.id}, in flight at the kill`).toEqual([true]);
      }
      // The calls cut off by the kill were reported as such.
      for (const session of sessionsOnVictim) {
        const report = accepted().find((a) => a.sessionId === session);
        expect(JSON.parse(report!.report.body)).toMatchObject({ end_reason: 'cut_off', direction: 'outbound' });
      }
    },
    CHILD_TEST_TIMEOUT_MS * 3,
  );
});
