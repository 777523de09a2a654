/**
 * A rolling restart under steady webhook calls, and what must hold after it: every question had
 * its one right answer (with the call's past), every call is one record ended by its caller with
 * every turn, and one report each. The balancer in front is the caller's choice.
 */
import type pg from 'pg';
import { expect } from 'vitest';
import { countedAnswer, until, WebhookCaller } from './webhook-caller.js';

export interface RollingRestart {
  /** Where the callers post: the balancer. */
  readonly front: string;
  /** How many calls are under way at any time. */
  readonly steady: number;
  /** Questions per call. */
  readonly turns: number;
  /** The replicas to restart one after another, as many rounds as `rounds`: each stops and is started again. */
  readonly replicas: number;
  readonly rounds: number;
  /** Stops replica `index` (SIGTERM), waits for it to exit, and starts it again; resolves with the calls it handed over. */
  restart(index: number): Promise<number>;
  /**
   * The least time from one replica's stop to the next one's, as an operator paces a roll: a
   * balancer without readiness checks (nginx) leaves a replica it saw stop out for its fail_timeout,
   * and a replica started again is back in its rotation only after that.
   */
  readonly gapMs?: number;
  /** A failing test stops the callers too, so none posts on into a torn-down balancer. */
  onCleanup(stop: () => void): void;
}

/** Runs the restarts under the calls; resolves with every caller once they have all hung up. */
export async function rollingRestartUnderCalls(plan: RollingRestart): Promise<{ callers: WebhookCaller[]; handedOver: number[] }> {
  const callers: WebhookCaller[] = [];
  let restarting = true;
  plan.onCleanup(() => (restarting = false));
  const pause = () => new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 300));
  // Each place starts a new call as soon as its last one hung up, until the restarts are over.
  const steady = Array.from({ length: plan.steady }, async (_, place) => {
    for (let round = 0; restarting; round++) {
      const caller = new WebhookCaller(plan.front, `steady-${place}-${round}`);
      callers.push(caller);
      await caller.start();
      for (let turn = 1; turn <= plan.turns; turn++) {
        await pause();
        await caller.ask(`Question ${turn} of ${caller.id}`);
      }
      await pause();
      await caller.hangUp();
    }
  });
  // Awaited below; marked handled now so a failure before then is the test's, not an unhandled rejection.
  for (const caller of steady) caller.catch(() => undefined);
  const handedOver: number[] = [];
  let lastStop: number | undefined;
  try {
    for (let round = 0; round < plan.rounds; round++) {
      for (let index = 0; index < plan.replicas; index++) {
        // Calls of every replica in progress before it is told to stop.
        const before = callers.length;
        await until(async () => callers.length, (n) => n >= Math.max(plan.steady, before) + Math.ceil(plan.steady / 3), 'calls under way');
        const wait = lastStop === undefined ? 0 : lastStop + (plan.gapMs ?? 0) - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        lastStop = Date.now();
        handedOver.push(await plan.restart(index));
      }
    }
  } finally {
    restarting = false;
  }
  await Promise.all(steady);
  return { callers, handedOver };
}

interface CallRow {
  session_id: string;
  end_reason: string | null;
  turns: string;
}

/** Every question answered rightly, every call one record ended by its caller with every turn, one report each. */
export async function expectEveryCallKept(db: pg.Client, callers: readonly WebhookCaller[], turns: number): Promise<void> {
  expect(callers.flatMap((c) => c.problems.map((p) => `${c.id}: ${p}`))).toEqual([]);
  for (const caller of callers) {
    expect(caller.heard.slice(1)).toEqual(Array.from({ length: turns }, (_, i) => countedAnswer(i + 1, `Question ${i + 1} of ${caller.id}`)));
  }
  const rows = await until(
    async () => (await db.query<CallRow>('SELECT session_id, end_reason, turns FROM calls')).rows,
    (all) => all.length >= callers.length && all.every((row) => row.end_reason !== null),
    "every call's end on record",
  ).catch(async (error: unknown) => {
    const { rows: open } = await db.query<CallRow>("SELECT session_id, end_reason FROM calls WHERE end_reason IS DISTINCT FROM 'caller_hung_up'");
    throw new Error(`${String(error)}; not ended by their callers: ${JSON.stringify(open)}`);
  });
  expect(rows).toHaveLength(callers.length);
  for (const row of rows) {
    expect({ session: row.session_id, end: row.end_reason, turns: (JSON.parse(row.turns) as unknown[]).length }).toEqual({
      session: row.session_id,
      end: 'caller_hung_up',
      turns,
    });
  }
  const reports = async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM reports')).rows[0]!.n);
  await until(reports, (n) => n >= callers.length, 'every report');
  expect(await reports()).toBe(callers.length);
}
