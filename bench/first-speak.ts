/**
 * Talking calls: the traffic of first-speak overhead, the time-to-first-speak
 * comparison and the capacity ladder. Each call waits a random pause, says
 * something, receives the reply sentence by sentence, plays it, and repeats.
 */
import { completingTokenIndices, nextSentenceReleases, wholeReplyRelease } from './baselines.js';
import { now, sleep } from './clock.js';
import type { HotlineUnderTest, LoopFigures } from './hotline-probes.js';
import type { BenchFixture, ReplyInfo } from './llm-fixture.js';
import { question, tagOf } from './replies.js';
import { seededRandom, summarize, type Summary } from './stats.js';
import { openCallers, type Caller } from './ws-callers.js';

export interface TalkOptions {
  calls: number;
  turns: number;
  /** Calls are opened gradually, at this rate, before any of them talks. */
  openPerSecond: number;
  /** Mean pause before each turn (uniform between 0 and twice this), so turns never start in lockstep. */
  thinkMs: number;
  msPerChar: number;
  seed: number;
  /** A reply not complete by then is counted as timed out and left out of the figures. */
  turnTimeoutMs: number;
  idPrefix: string;
  /** What the caller says to ask for the tagged reply; it must contain the tag (default: replies.ts's question). */
  words?: ((tag: string) => string) | undefined;
}

export interface TalkRun {
  calls: number;
  turns: number;
  replies: ReplyInfo[];
  timedOut: number;
  /** From the first turn to the last reply played; opening the calls not included. */
  durationS: number;
  /** Of Hotline's thread while the calls talked. */
  eventLoop: LoopFigures;
}

/** `target`: whom the calls talk to, Hotline or the floor (fixture.floor), on the same LLM server. */
export async function runTalkingCalls(fixture: BenchFixture, options: TalkOptions, target: HotlineUnderTest = fixture.hotline): Promise<TalkRun> {
  fixture.reset();
  const callers = await openCallers(
    target.wsUrl,
    options.calls,
    options.openPerSecond,
    options.idPrefix,
    {
      msPerChar: options.msPerChar,
      onSpeak: (caller, text, at, tts) => fixture.noteSpeak(text, at, fixture.onSpeak ? { caller: caller.id, tts } : undefined),
    },
    (text) => tagOf(text) === undefined,
  );
  await target.startProbe();
  await target.startLoopMonitor();
  const started = now();
  let timedOut = 0;

  const talk = async (caller: Caller, index: number): Promise<void> => {
    // One generator per call: the schedule must not depend on how the calls interleave.
    const random = seededRandom(options.seed * 100_003 + index + 1);
    await sleep(random() * 2 * options.thinkMs);
    for (let turn = 0; turn < options.turns && caller.open; turn++) {
      const reply = fixture.newReply();
      let timer: NodeJS.Timeout | undefined;
      const complete = new Promise<boolean>((resolve) => {
        reply.complete = () => resolve(true);
        timer = setTimeout(() => resolve(false), options.turnTimeoutMs);
      });
      reply.sentAt = now();
      caller.say(options.words ? options.words(reply.tag) : question(reply.tag));
      if (!(await complete)) timedOut++;
      clearTimeout(timer);
      await caller.drained();
      await sleep(random() * 2 * options.thinkMs);
    }
  };
  let eventLoop: LoopFigures;
  try {
    await Promise.all(callers.map((caller, i) => talk(caller, i)));
  } finally {
    eventLoop = await target.stopLoopMonitor();
    fixture.noteLeft((await target.stopProbe()).speaks);
  }
  const durationS = (now() - started) / 1000;
  await Promise.all(callers.map((caller) => caller.end()));
  return {
    calls: options.calls,
    turns: options.turns,
    replies: [...fixture.replies.values()],
    timedOut,
    durationS,
    eventLoop,
  };
}

export interface ReplyAnalysis {
  replies: number;
  speaks: number;
  /**
   * Completing token written by the LLM server → the speak left Hotline (its
   * WebSocket send returned): the loopback hop in, Hotline's HTTP client, SSE
   * parsing, turn, chunker, call and transport, and any wait on Hotline's
   * event loop.
   */
  overheadMs: Summary;
  /** Completing token written → the speak arrived at the voice-service client: adds the hop out and the client's side. */
  endToEndMs: Summary;
  /**
   * The overhead split where the LLM socket's data last read before the speak reached the reader's code
   * (at one call the completing token's; with many, possibly another call's): `wireMs` before it (the
   * loopback hop, the kernel, waking the thread and any wait for it), `workMs` after it (the reader's own work).
   */
  wireMs: Summary;
  workMs: Summary;
  /**
   * Speaks that left Hotline after the token following their completing token
   * had already been written: the overhead exceeded a token's spacing.
   */
  lateSpeaks: number;
  /** Replies left out: incomplete, or a different number of speaks than the chunker predicts. */
  skipped: number;
  /**
   * Between two tokens of a reply as the LLM server wrote them (nominally --tokens-per-second
   * apart): longer when the server's thread could not keep up, which lightens the load offered.
   */
  llmTokenGapMs: Summary;
  /** All from the moment the user_speak was sent. */
  timeToFirstSpeak: {
    hotlineMs: Summary;
    /** (a) one speak after the reply completes = the last token. */
    wholeReplyMs: Summary;
    /** (b) a sentence released once the next one begins. */
    nextSentenceMs: Summary;
    /** The token completing Hotline's first sentence: what zero overhead would give. */
    llmFirstSentenceMs: Summary;
    /** The LLM server began to receive the turn's request: the caller's words → the request, Hotline's part of the turn's start. */
    llmRequestMs: Summary;
    llmFirstTokenMs: Summary;
    /** Hotline's last speak arriving: the whole reply has reached the service. */
    hotlineLastSpeakMs: Summary;
  };
}

/** Replays each complete reply's recorded tokens through Hotline's chunker and the baselines. */
export function analyzeReplies(replies: readonly ReplyInfo[]): ReplyAnalysis {
  const overheads: number[] = [];
  const endToEnd: number[] = [];
  const wire: number[] = [];
  const work: number[] = [];
  const hotline: number[] = [];
  const whole: number[] = [];
  const next: number[] = [];
  const llmFirstSentence: number[] = [];
  const llmRequest: number[] = [];
  const llmFirstToken: number[] = [];
  const lastSpeak: number[] = [];
  const gaps: number[] = [];
  let late = 0;
  let skipped = 0;
  let used = 0;
  for (const reply of replies) {
    const tokens = reply.tokens;
    if (tokens.length === 0 || reply.arrivals.length !== reply.expected || reply.left.length !== reply.expected) {
      skipped++;
      continue;
    }
    const completing = completingTokenIndices(tokens.map((t) => t.text));
    if (completing.length !== reply.arrivals.length) {
      skipped++;
      continue;
    }
    used++;
    for (let i = 1; i < tokens.length; i++) gaps.push((tokens[i]?.at ?? Number.NaN) - (tokens[i - 1]?.at ?? Number.NaN));
    completing.forEach((tokenIndex, k) => {
      const written = tokens[tokenIndex]?.at ?? Number.NaN;
      const left = reply.left[k] ?? Number.NaN;
      overheads.push(left - written);
      const read = reply.read[k] ?? Number.NaN;
      if (Number.isFinite(read)) {
        wire.push(read - written);
        work.push(left - read);
      }
      endToEnd.push((reply.arrivals[k] ?? Number.NaN) - written);
      const following = tokens[tokenIndex + 1];
      if (following && following.at < left) late++;
    });
    const sentAt = reply.sentAt;
    hotline.push((reply.arrivals[0] ?? Number.NaN) - sentAt);
    lastSpeak.push((reply.arrivals.at(-1) ?? Number.NaN) - sentAt);
    whole.push((wholeReplyRelease(tokens)?.at ?? Number.NaN) - sentAt);
    next.push((nextSentenceReleases(tokens)[0]?.at ?? Number.NaN) - sentAt);
    llmFirstSentence.push((tokens[completing[0] ?? -1]?.at ?? Number.NaN) - sentAt);
    llmRequest.push((reply.requestedAt ?? Number.NaN) - sentAt);
    llmFirstToken.push((tokens[0]?.at ?? Number.NaN) - sentAt);
  }
  return {
    replies: used,
    speaks: overheads.length,
    overheadMs: summarize(overheads),
    endToEndMs: summarize(endToEnd),
    wireMs: summarize(wire),
    workMs: summarize(work),
    lateSpeaks: late,
    skipped,
    llmTokenGapMs: summarize(gaps),
    timeToFirstSpeak: {
      hotlineMs: summarize(hotline),
      wholeReplyMs: summarize(whole),
      nextSentenceMs: summarize(next),
      llmFirstSentenceMs: summarize(llmFirstSentence),
      llmRequestMs: summarize(llmRequest),
      llmFirstTokenMs: summarize(llmFirstToken),
      hotlineLastSpeakMs: summarize(lastSpeak),
    },
  };
}

export interface FirstSpeakLevel extends ReplyAnalysis {
  calls: number;
  turns: number;
  timedOut: number;
  durationS: number;
  eventLoop: LoopFigures;
  /**
   * The floor (raw-reader.ts): the same calls, turns and token streams right after, read by the least
   * any program could do with them on a thread of its own; when the fixture has one.
   */
  floor?: FloorLevel;
}

export type FloorLevel = Omit<FirstSpeakLevel, 'floor'>;

/** `target`: Hotline, or the floor (fixture.floor) with the same options: its calls talk on the same schedule. */
export async function measureLevel(fixture: BenchFixture, options: TalkOptions, target: HotlineUnderTest = fixture.hotline): Promise<FirstSpeakLevel> {
  const run = await runTalkingCalls(fixture, options, target);
  const analysis = analyzeReplies(run.replies);
  fixture.reset();
  return {
    calls: run.calls,
    turns: run.turns,
    timedOut: run.timedOut,
    durationS: run.durationS,
    eventLoop: run.eventLoop,
    ...analysis,
  };
}
