/**
 * Barge-in: many calls in parallel, each interrupting a streamed reply at a
 * random moment with a new user_speak (barged_in: true), which starts the
 * reply the next interruption hits. Measures how fast the LLM stream is
 * closed and whether anything of the interrupted reply is still spoken.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { now, sleep } from './clock.js';
import type { LoopFigures } from './hotline-probes.js';
import type { BenchFixture, ReplyInfo } from './llm-fixture.js';
import { question, STREAM_GAPS, tagOf } from './replies.js';
import { seededRandom, summarize, type Summary } from './stats.js';
import { Caller, openCallers } from './ws-callers.js';

export interface BargeInOptions {
  trials: number;
  calls: number;
  /** Interruptions per call before it hangs up and a new call takes its place. */
  trialsPerCall: number;
  openPerSecond: number;
  msPerChar: number;
  tokenDelayMs: number;
  seed: number;
  idPrefix: string;
}

export interface BargeInResult {
  trials: number;
  /** Calls in parallel. */
  calls: number;
  trialsPerCall: number;
  /** Trials whose LLM stream was still open when the barge-in came, and was closed. */
  abortedStreams: number;
  /** Trials whose stream had already ended (the random moment fell after the last token). */
  completedBeforeBargeIn: number;
  /** Trials whose stream was neither aborted nor complete when the run ended. */
  neverClosed: number;
  /**
   * The client sent the barge-in → Hotline destroyed the LLM connection's
   * socket, which closes the stream: the loopback hop in, any wait on
   * Hotline's event loop, and Hotline's handling. Stricter than the target.
   */
  abortMs: Summary;
  /** The socket data carrying the barge-in reached Hotline's code → the LLM socket was destroyed: the target figure. */
  abortFromReceivedMs: Summary;
  /** The client sent the barge-in → its socket data reached Hotline's code: the loopback hop and the wait for Hotline's loop. */
  wireMs: Summary;
  /** The barge-in entered Hotline's call core → the LLM socket was destroyed: Hotline's own handling. */
  abortFromCoreMs: Summary;
  /**
   * The client sent the barge-in → the LLM server saw its stream close: adds
   * the server noticing, which depends on how busy its thread is.
   */
  serverSawCloseMs: Summary;
  /**
   * Speaks of an interrupted reply that Hotline sent after the barge-in had
   * reached its call core: true stale speech.
   */
  staleSent: number;
  /** Speaks of an interrupted reply that arrived at the client after it sent the barge-in. */
  staleArrived: number;
  /**
   * Of those, the ones Hotline had sent before the barge-in reached it: they
   * crossed the barge-in on the loopback, which no server can prevent.
   */
  crossedInFlight: number;
  durationS: number;
  /** Hotline's event loop over the run. */
  eventLoop: LoopFigures;
  /** Event-loop delay p99 of the thread the callers (and the LLM server, unless on its own thread) run on. */
  callersLoopP99Ms: number;
}

interface Trial {
  reply: ReplyInfo;
  bargeInAt: number;
  receivedAt?: number;
  coreAt?: number;
  socketDestroyedAt?: number;
}

/**
 * Runs `trials` interruptions over `calls` parallel calls. A probe on
 * Hotline's thread tells when each barge-in entered Hotline, when the LLM
 * socket was destroyed and when each speak left, so a stale speak can be told
 * from one that merely crossed the barge-in on the wire.
 */
export async function runBargeIns(fixture: BenchFixture, options: BargeInOptions): Promise<BargeInResult> {
  fixture.reset();
  const trials: Trial[] = [];
  /** Each session's trials in the order its barge-ins were sent; a socket delivers them in that order. */
  const trialsBySession = new Map<string, Trial[]>();
  await fixture.hotline.startProbe();
  await fixture.hotline.startLoopMonitor();
  const mainLoop = monitorEventLoopDelay({ resolution: 2 });
  mainLoop.enable();
  const firstTokenWaiters = new Map<string, () => void>();
  fixture.onFirstToken = (reply) => {
    const resolve = firstTokenWaiters.get(reply.tag);
    firstTokenWaiters.delete(reply.tag);
    resolve?.();
  };

  const callerOptions = { msPerChar: options.msPerChar, onSpeak: (_caller: Caller, text: string, at: number) => fixture.noteSpeak(text, at) };
  const isGreeting = (text: string): boolean => tagOf(text) === undefined;
  const started = now();
  let eventLoop: LoopFigures | undefined;
  try {
    const callers = await openCallers(fixture.hotline.wsUrl, options.calls, options.openPerSecond, options.idPrefix, callerOptions, isGreeting);
    const perSlot = Math.ceil(options.trials / options.calls);
    let budget = options.trials;

    // A call takes a few interruptions, then hangs up and the next call starts: histories stay
    // the length of a real call instead of growing by two messages per interruption.
    const interruptMany = async (first: Caller, index: number): Promise<void> => {
      const random = seededRandom(options.seed * 200_003 + index + 1);
      await sleep(random() * 500);
      let caller = first;
      let done = 0;
      for (let session = 1; ; session++) {
        let current = ask(caller, false);
        for (let n = 0; n < options.trialsPerCall && done < perSlot && budget > 0 && caller.open; n++) {
          budget--;
          done++;
          const gotFirstToken = await firstToken(current, 30_000);
          if (gotFirstToken) await sleep(random() * (STREAM_GAPS[current.template] ?? 0) * options.tokenDelayMs);
          const trial: Trial = { reply: current, bargeInAt: 0 };
          const ofSession = trialsBySession.get(caller.id) ?? [];
          trialsBySession.set(caller.id, ofSession);
          ofSession.push(trial);
          trial.bargeInAt = now();
          current = ask(caller, true);
          trials.push(trial);
        }
        // A stale speak would follow its barge-in within milliseconds: wait for it before hanging up.
        await sleep(200);
        await caller.end();
        if (done >= perSlot || budget <= 0) return;
        caller = await Caller.connect(fixture.hotline.wsUrl, `${options.idPrefix}-${index}-${session}`, callerOptions, isGreeting);
        caller.start();
        await caller.greeted;
        await caller.drained();
      }
    };

    const ask = (caller: Caller, bargedIn: boolean): ReplyInfo => {
      const reply = fixture.newReply();
      reply.sentAt = now();
      caller.say(question(reply.tag), bargedIn);
      return reply;
    };

    const firstToken = (reply: ReplyInfo, timeoutMs: number): Promise<boolean> =>
      new Promise((resolve) => {
        if (reply.firstTokenAt !== undefined) return resolve(true);
        const timer = setTimeout(() => {
          firstTokenWaiters.delete(reply.tag);
          resolve(false);
        }, timeoutMs);
        firstTokenWaiters.set(reply.tag, () => {
          clearTimeout(timer);
          resolve(true);
        });
      });

    await Promise.all(callers.map((caller, i) => interruptMany(caller, i)));
  } finally {
    fixture.onFirstToken = undefined;
    mainLoop.disable();
    eventLoop = await fixture.hotline.stopLoopMonitor();
    const records = await fixture.hotline.stopProbe();
    fixture.noteLeft(records.speaks);
    const seen = new Map<string, number>();
    for (const record of records.bargeIns) {
      const k = seen.get(record.session) ?? 0;
      seen.set(record.session, k + 1);
      const trial = trialsBySession.get(record.session)?.[k];
      if (!trial) continue;
      trial.receivedAt = record.receivedAt;
      trial.coreAt = record.enteredAt;
      trial.socketDestroyedAt = record.socketDestroyedAt;
    }
  }
  const durationS = (now() - started) / 1000;
  // An LLM server on its own thread reports how a stream ended only afterwards: give the last reports time to land.
  await sleep(100);

  const abortMs: number[] = [];
  const abortFromCoreMs: number[] = [];
  const abortFromReceivedMs: number[] = [];
  const wireMs: number[] = [];
  const serverSawCloseMs: number[] = [];
  let aborted = 0;
  let completed = 0;
  let neverClosed = 0;
  let staleSent = 0;
  let staleArrived = 0;
  let crossed = 0;
  for (const trial of trials) {
    const { reply } = trial;
    if (reply.outcome === 'aborted' && reply.closedAt !== undefined) {
      aborted++;
      serverSawCloseMs.push(reply.closedAt - trial.bargeInAt);
      if (trial.socketDestroyedAt !== undefined) {
        abortMs.push(trial.socketDestroyedAt - trial.bargeInAt);
        if (trial.coreAt !== undefined) abortFromCoreMs.push(trial.socketDestroyedAt - trial.coreAt);
        if (trial.receivedAt !== undefined) abortFromReceivedMs.push(trial.socketDestroyedAt - trial.receivedAt);
        if (trial.receivedAt !== undefined) wireMs.push(trial.receivedAt - trial.bargeInAt);
      }
    } else if (reply.outcome === 'completed') {
      completed++;
    } else {
      neverClosed++;
    }
    const coreAt = trial.coreAt ?? trial.bargeInAt;
    const sent = reply.left;
    for (const sentAt of sent) if (sentAt > coreAt) staleSent++;
    // A socket delivers in order, so the k-th speak sent is the k-th to arrive.
    reply.arrivals.forEach((arrivedAt, k) => {
      if (arrivedAt <= trial.bargeInAt) return;
      staleArrived++;
      if ((sent[k] ?? Infinity) <= coreAt) crossed++;
    });
  }
  fixture.reset();
  return {
    trials: trials.length,
    calls: options.calls,
    trialsPerCall: options.trialsPerCall,
    abortedStreams: aborted,
    completedBeforeBargeIn: completed,
    neverClosed,
    abortMs: summarize(abortMs),
    abortFromCoreMs: summarize(abortFromCoreMs),
    abortFromReceivedMs: summarize(abortFromReceivedMs),
    wireMs: summarize(wireMs),
    serverSawCloseMs: summarize(serverSawCloseMs),
    staleSent,
    staleArrived,
    crossedInFlight: crossed,
    durationS,
    eventLoop: eventLoop ?? { p50Ms: 0, p99Ms: 0, maxMs: 0, utilization: 0 },
    callersLoopP99Ms: mainLoop.percentile(99) / 1e6,
  };
}
