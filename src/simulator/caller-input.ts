import { parseDtmfKeys } from './dtmf.js';

/** A line the caller typed: words to say, or one of the commands that stand for what a voice cannot type. */
export type CallerInput =
  | { kind: 'say'; text: string }
  | { kind: 'hangup' }
  | { kind: 'dtmf'; keys: string }
  | { kind: 'silence' }
  | { kind: 'barge_in'; text?: string }
  | { kind: 'invalid'; problem: string };

/** The commands and what they do, for the usage. */
export const CALLER_COMMANDS = [
  ['/dtmf <keys>', 'press keypad keys, one dtmf_received each, e.g. /dtmf 4711# (0-9 * # A-D)'],
  ['/silence', 'stay silent: user_input_timeout, sent once the playback has ended'],
  ['/bargein [words]', 'interrupt the older way: user_barge_in, with your words if given'],
  ['/hangup', 'hang up (Ctrl-D too)'],
] as const;

const COMMAND_NAMES = '/dtmf <keys>, /silence, /bargein [words] or /hangup';

/** Reads one non-empty, trimmed line. */
export function parseCallerInput(line: string): CallerInput {
  if (!line.startsWith('/')) return { kind: 'say', text: line };
  const [, name = '', rest = ''] = /^(\/\S*)\s*(.*)$/s.exec(line) ?? [];
  const args = rest.trim();
  switch (name.toLowerCase()) {
    case '/hangup':
      return args === '' ? { kind: 'hangup' } : { kind: 'invalid', problem: '/hangup takes nothing after it' };
    case '/silence':
      return args === '' ? { kind: 'silence' } : { kind: 'invalid', problem: '/silence takes nothing after it' };
    case '/bargein':
      return args === '' ? { kind: 'barge_in' } : { kind: 'barge_in', text: args };
    case '/dtmf': {
      const parsed = parseDtmfKeys(args);
      return parsed.ok ? { kind: 'dtmf', keys: parsed.keys } : { kind: 'invalid', problem: `/dtmf: ${parsed.problem}` };
    }
    default:
      return { kind: 'invalid', problem: `unknown command ${name}: use ${COMMAND_NAMES}; nothing was sent` };
  }
}
