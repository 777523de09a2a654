/**
 * Who, or what, picks up a call the platform emulator places: the person
 * (you, at the terminal), their mailbox, nobody, or a busy line. And what the
 * emulator remembers of each placed call, for tests to assert on.
 */

export type PersonAnswer = 'person' | 'mailbox' | 'no_answer' | 'busy';

export const PERSON_ANSWERS: readonly PersonAnswer[] = ['person', 'mailbox', 'no_answer', 'busy'];

/** A carrier's mailbox greeting, as the service's speech recogniser would write it down. */
export const MAILBOX_GREETINGS = {
  en: 'The person you are trying to reach is not available. Please leave a message after the tone.',
  de: 'Der gewünschte Gesprächspartner ist zurzeit nicht erreichbar. Sie können aber nach dem Signalton eine Nachricht hinterlassen.',
} as const;

export type PlacedCallEnd =
  /** Hotline sent hangup. */
  | 'hotline_hung_up'
  | 'transferred'
  /** The person called hung up (their input ended, or /hangup). */
  | 'person_hung_up'
  /** The mailbox stopped recording at its time limit and hung up. */
  | 'mailbox_time_up'
  /** The connection to Hotline broke. */
  | 'lost'
  /** Hotline refused the call or could not be reached. */
  | 'refused'
  /** Nobody answered: Hotline was never rung. */
  | 'no_answer'
  /** The line was busy: Hotline got only a session_end. */
  | 'busy'
  /** The emulator was closed during the call. */
  | 'emulator_closed';

/** One call placed through the emulator's API, updated as it goes. */
export interface PlacedCallRecord {
  readonly aiFlowId: string;
  readonly toPhoneNumber: string;
  readonly answeredAs: PersonAnswer;
  /** The session of the call Hotline was rung with (busy: of its session_end); undefined for no_answer. */
  sessionId: string | undefined;
  /** The words of each of Hotline's speeches that started playing, in order. */
  readonly hotlineSaid: string[];
  /** Mailbox only: what started playing after the beep, which is what the mailbox recorded. */
  readonly message: string[];
  /** Undefined while the call is waiting or in progress. */
  ended: PlacedCallEnd | undefined;
}

/** How the person at `toPhoneNumber` answers; the keys of `answers` may be written as people write numbers. */
export function answerFor(
  toPhoneNumber: string,
  answers: Readonly<Record<string, PersonAnswer>>,
  fallback: PersonAnswer,
): PersonAnswer {
  for (const [number, answer] of Object.entries(answers)) {
    if (digitsOf(number) === toPhoneNumber) return answer;
  }
  return fallback;
}

/** The greeting's sentences: a speech recogniser sends one final transcript per sentence it hears. */
export function greetingSegments(greeting: string): string[] {
  return greeting
    .split(/(?<=[.!?…])\s+/u)
    .map((segment) => segment.trim())
    .filter((segment) => segment !== '');
}

/** "+49 151 1234567" → "491511234567", as the service writes numbers. */
function digitsOf(number: string): string {
  return number.replace(/[\s()./-]/g, '').replace(/^\+/, '');
}
