/**
 * Barge-in: many calls in parallel, each interrupting a streamed reply at a
 * random moment with a new user_speak (barged_in: true), which starts the
 * reply the next interruption hits. Measures how fast the LLM stream is
 * closed and whether anything of the interrupted reply is still spoken.
 */
import { probeCore } from './core-probe.js';
import { BenchFixture, now, sleep, type ReplyInfo } from './llm-fixture.js';
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
  /** Client sent the barge-in → the scripted server saw the stream close. */
  abortMs: Summary;
  /** The barge-in event entered Hotline's call core → the stream closed. */
  abortFromCoreMs: Summary;
  /**
   * The barge-in event entered the call core → Hotline's HTTP client destroyed
   * the LLM connection's socket. Hotline's and the SDK's part of the close; the
   * rest is the LLM server noticing, which here shares the thread.
   */
  socketDestroyedMs: Summary;
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
}

interface Trial {
  reply: ReplyInfo;
  bargeInAt: number;
  coreAt?: number;
  socketDestroyedAt?: number;
}

/**
 * Runs `trials` interruptions over `calls` parallel calls. A core probe tells
 * when each barge-in entered Hotline and when each speak left it, so a stale
 * speak can be told from one that merely crossed the barge-in on the wire.
 */
export async function runBargeIns(fixture: BenchFixture, options: BargeInOptions): Promise<BargeInResult> {
  fixture.reset();
  const trials: Trial[] = [];
  /** The trial each session's next barge-in belongs to, set just before the client sends it. */
  const pendingBySession = new Map<string, Trial>();
  /** The trial whose barge-in the call core is handling right now (it aborts synchronously). */
  let handling: Trial | undefined;
  const uninstall = probeCore(fixture.hotline.registry, {
    entered(event, at) {
      if (event.type !== 'user_speak' || !event.barged_in) return;
      handling = pendingBySession.get(event.session.id);
      if (handling) handling.coreAt = at;
    },
    handled() {
      handling = undefined;
    },
    speakSent: (text, at) => fixture.noteCoreSpeak(text, at),
  });
  // The first socket destroyed while the core handles a barge-in is the LLM stream being closed by Hotline's HTTP client.
  fixture.onSocketDestroy = () => {
    if (handling && handling.socketDestroyedAt === undefined) handling.socketDestroyedAt = now();
  };
  const firstTokenWaiters = new Map<string, () => void>();
  fixture.onFirstToken = (reply) => {
    const resolve = firstTokenWaiters.get(reply.tag);
    firstTokenWaiters.delete(reply.tag);
    resolve?.();
  };

  const callerOptions = { msPerChar: options.msPerChar, onSpeak: (_caller: Caller, text: string, at: number) => fixture.noteSpeak(text, at) };
  const isGreeting = (text: string): boolean => tagOf(text) === undefined;
  const started = now();
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
          pendingBySession.set(caller.id, trial);
          trial.bargeInAt = now();
          current = ask(caller, true);
          trials.push(trial);
        }
        // A stale speak would follow its barge-in within milliseconds: wait for it before hanging up.
        await sleep(200);
        pendingBySession.delete(caller.id);
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
    uninstall();
    fixture.onSocketDestroy = undefined;
    fixture.onFirstToken = undefined;
  }
  const durationS = (now() - started) / 1000;

  const abortMs: number[] = [];
  const abortFromCoreMs: number[] = [];
  const socketDestroyedMs: number[] = [];
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
      abortMs.push(reply.closedAt - trial.bargeInAt);
      if (trial.coreAt !== undefined) abortFromCoreMs.push(reply.closedAt - trial.coreAt);
      if (trial.coreAt !== undefined && trial.socketDestroyedAt !== undefined) socketDestroyedMs.push(trial.socketDestroyedAt - trial.coreAt);
    } else if (reply.outcome === 'completed') {
      completed++;
    } else {
      neverClosed++;
    }
    const coreAt = trial.coreAt ?? trial.bargeInAt;
    const sent = reply.coreSent;
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
    socketDestroyedMs: summarize(socketDestroyedMs),
    staleSent,
    staleArrived,
    crossedInFlight: crossed,
    durationS,
  };
}
