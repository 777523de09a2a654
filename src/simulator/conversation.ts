import type { CallEnd, Caller } from './caller.js';
import { parseCallerInput, type CallerInput } from './caller-input.js';
import type { LineSource } from './line-source.js';
import { formatCallerLine, formatWarning } from './output.js';

export interface ConversationOptions {
  /** A person at a terminal: the terminal echoes what they type, and the end of input hangs up at once. */
  interactive: boolean;
  /** Wait for Hotline's answer to each line (and the greeting) before sending the next. */
  waitForAnswers: boolean;
  answerTimeoutMs: number;
  output: (line: string) => void;
}

/** Feeds the caller's lines into the call until either side hangs up or the input ends. */
export async function converse(caller: Caller, lines: LineSource, options: ConversationOptions): Promise<CallEnd> {
  const { output } = options;
  const awaitAnswer = async () => {
    const outcome = await caller.waitForAnswer(options.answerTimeoutMs);
    if (outcome !== 'timeout') return;
    const unfinished = caller.answerUnfinished ? ' (no speak that ends its turn, with user_input_timeout_seconds, came)' : '';
    output(formatWarning(`Hotline did not finish answering within ${options.answerTimeoutMs} ms${unfinished}; going on`));
  };
  /** The echo for piped input (the terminal echoes nothing), or just the note at a terminal. */
  const show = (text: string, note?: string) => {
    if (!options.interactive) output(formatCallerLine(text, note));
    else if (note !== undefined) output(`(${note})`);
  };

  // Whether Hotline has finished answering the latest thing said (at first: the greeting).
  let answered = false;
  if (options.waitForAnswers) {
    await awaitAnswer();
    answered = true;
  }
  while (!caller.isOver) {
    const next = await lines.next(caller.overSignal);
    if (next.kind === 'aborted') break;
    if (next.kind === 'end') {
      // A script's last line deserves its answer before the caller hangs up; a person pressing Ctrl-D does not wait.
      if (!options.interactive && !answered) await awaitAnswer();
      await caller.hangUp();
      break;
    }
    if (caller.isOver) {
      lines.putBack(next.text);
      break;
    }
    const text = next.text.trim();
    if (text === '') continue;
    const input = parseCallerInput(text);
    if (input.kind === 'hangup') {
      show(text);
      await caller.hangUp();
      break;
    }
    const expectsAnswer = await perform(caller, input, text, show, output);
    if (!expectsAnswer) continue;
    answered = false;
    if (options.waitForAnswers) {
      await awaitAnswer();
      answered = true;
    }
  }
  return caller.ended;
}

/** Does what the line asks; returns whether Hotline is now expected to answer. */
async function perform(
  caller: Caller,
  input: Exclude<CallerInput, { kind: 'hangup' }>,
  line: string,
  show: (text: string, note?: string) => void,
  output: (line: string) => void,
): Promise<boolean> {
  switch (input.kind) {
    case 'invalid':
      output(formatWarning(input.problem));
      return false;
    case 'say': {
      const outcome = caller.say(input.text);
      show(line, outcome.heldBecause ?? (outcome.bargedIn ? 'barge-in: playback stopped' : undefined));
      return true;
    }
    case 'dtmf':
      show(line);
      await caller.pressKeys(input.keys);
      return true;
    case 'silence': {
      show(line, caller.speaking ? 'silent until the playback has ended' : undefined);
      const { asked } = await caller.staySilent();
      if (!asked) {
        output(formatWarning('the latest speak asked for no user_input_timeout_seconds: the service would not report silence; sent anyway'));
      }
      return true;
    }
    case 'barge_in': {
      const stopped = caller.bargeIn(input.text);
      show(line, stopped ? 'user_barge_in: playback stopped' : 'user_barge_in: nothing was playing');
      // Without words there is nothing to answer yet: the words follow as a user_speak.
      return input.text !== undefined;
    }
  }
}
