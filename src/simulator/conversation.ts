import type { CallEnd, Caller } from './caller.js';
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

const HANGUP_COMMAND = '/hangup';

/** Feeds the caller's lines into the call until either side hangs up or the input ends. */
export async function converse(caller: Caller, lines: LineSource, options: ConversationOptions): Promise<CallEnd> {
  const { output } = options;
  const awaitAnswer = async () => {
    const outcome = await caller.waitForAnswer(options.answerTimeoutMs);
    if (outcome === 'timeout') output(formatWarning(`Hotline did not finish answering within ${options.answerTimeoutMs} ms; going on`));
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
    if (text === HANGUP_COMMAND) {
      if (!options.interactive) output(formatCallerLine(text, false));
      await caller.hangUp();
      break;
    }
    const bargesIn = caller.speaking;
    if (!options.interactive) output(formatCallerLine(text, bargesIn));
    else if (bargesIn) output('(barge-in: playback stopped)');
    caller.say(text);
    answered = false;
    if (options.waitForAnswers) {
      await awaitAnswer();
      answered = true;
    }
  }
  return caller.ended;
}
