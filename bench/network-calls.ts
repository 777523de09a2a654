/**
 * The network phase's callers: a few calls in parallel over real WebSockets, each greeted, then
 * saying something after a pause as a person would (seconds, not the other phases' half second),
 * hearing the whole answer played and pausing again. Some turns ask about an order, which the
 * model looks up with the business tool before it answers.
 */
import { now, sleep } from './clock.js';
import { callerWords, expectedSpeaks, networkTag, tagIn, type TurnKind } from './network-script.js';
import { seededRandom } from './stats.js';
import { Caller } from './ws-callers.js';

export interface CallsOptions {
  calls: number;
  turns: number;
  /** The pause before each turn, uniform in this range (ms); min = max for a fixed one. */
  gapMs: { min: number; max: number };
  msPerChar: number;
  seed: number;
  turnTimeoutMs: number;
}

export interface TurnRecord {
  call: number;
  /** 0 for a call's first turn. */
  turn: number;
  kind: TurnKind;
  tag: string;
  /** When the caller's words were sent (the voice service's user_speak). */
  sentAt: number;
  /** When the answer's first sentence arrived as a speak. */
  firstSpeakAt: number | undefined;
  speaks: number;
  /** Untagged speaks during the turn: hold lines or fillers, said while the caller waited. */
  otherSpeaks: number;
  timedOut: boolean;
}

/** Half the calls ask about an order first, half later, and every other turn after: first and later turns both have tool turns. */
export function turnKind(call: number, turn: number): TurnKind {
  return (call + turn) % 2 === 1 ? 'tool' : 'plain';
}

export async function runCalls(wsUrl: string, options: CallsOptions): Promise<TurnRecord[]> {
  const records: TurnRecord[] = [];
  const current = new Map<Caller, { record: TurnRecord; expected: number; complete: () => void }>();
  const onSpeak = (caller: Caller, text: string, at: number): void => {
    const turn = current.get(caller);
    if (!turn) return;
    if (tagIn(text) !== turn.record.tag) {
      turn.record.otherSpeaks++;
      return;
    }
    turn.record.firstSpeakAt ??= at;
    if (++turn.record.speaks === turn.expected) turn.complete();
  };
  let nextTag = 0;
  const gap = (random: () => number): number => options.gapMs.min + random() * (options.gapMs.max - options.gapMs.min);

  const call = async (index: number): Promise<void> => {
    // One generator per call: the schedule must not depend on how the calls interleave.
    const random = seededRandom(options.seed * 100_003 + index + 1);
    // Calls start spread over one pause, so their turns do not come in step.
    await sleep(random() * options.gapMs.max);
    const caller = await Caller.connect(wsUrl, `net-${index}`, { msPerChar: options.msPerChar, onSpeak }, (text) => tagIn(text) === undefined);
    try {
      caller.start();
      await caller.greeted;
      await caller.drained();
      for (let turn = 0; turn < options.turns && caller.open; turn++) {
        await sleep(gap(random));
        const kind = turnKind(index, turn);
        const record: TurnRecord = { call: index, turn, kind, tag: networkTag(nextTag++), sentAt: 0, firstSpeakAt: undefined, speaks: 0, otherSpeaks: 0, timedOut: false };
        records.push(record);
        let timer: NodeJS.Timeout | undefined;
        const completed = new Promise<boolean>((resolve) => {
          current.set(caller, { record, expected: expectedSpeaks(kind), complete: () => resolve(true) });
          timer = setTimeout(() => resolve(false), options.turnTimeoutMs);
        });
        record.sentAt = now();
        caller.say(callerWords(kind, record.tag));
        record.timedOut = !(await completed);
        clearTimeout(timer);
        current.delete(caller);
        await caller.drained();
      }
    } finally {
      await caller.end();
    }
  };
  await Promise.all(Array.from({ length: options.calls }, (_, i) => call(i)));
  return records;
}
