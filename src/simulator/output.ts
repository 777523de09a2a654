/**
 * What the terminal shows. Plain text only: a transcript piped to a file or
 * pasted into a bug report must read the same as on screen.
 */
import { describeAudio, describeSms, describeSpeakOptions, describeTransfer } from './action-summary.js';

export interface ShownAction {
  type: string;
  text?: unknown;
  target?: unknown;
  [field: string]: unknown;
}

/** The widest time (`+9999 ms`, `+99.9 s`, `+9999 s`) and the space after it. */
const TIME_WIDTH = 9;
const TYPE_WIDTH = 10;

/** e.g. `+412 ms  speak     "Hello, thanks for calling!"`, `+14.2 s   speak     "…"` */
export function formatAction(action: ShownAction, msSinceCallerSpoke: number): string {
  const time = formatTime(msSinceCallerSpoke);
  // Never run together, even past the widest time the column is made for.
  const column = time.length < TIME_WIDTH ? time.padEnd(TIME_WIDTH) : `${time} `;
  const type = action.type.length < TYPE_WIDTH ? action.type.padEnd(TYPE_WIDTH) : `${action.type}  `;
  return `${column}${type}${describeAction(action)}`.trimEnd();
}

/** `+412 ms` below 10 s, `+14.2 s` below 100 s, whole seconds after: a time keeps to its column. */
export function formatTime(ms: number): string {
  const rounded = Math.max(0, Math.round(ms));
  if (rounded < 10_000) return `+${rounded} ms`;
  const tenths = Math.round(rounded / 100) / 10;
  return tenths < 100 ? `+${tenths.toFixed(1)} s` : `+${Math.round(rounded / 1000)} s`;
}

function describeAction(action: ShownAction): string {
  switch (action.type) {
    case 'speak': {
      // SSML is shown as sent: the markup is what someone reading a bug report needs to see.
      const said = typeof action.text === 'string' ? action.text : typeof action.ssml === 'string' ? action.ssml : '';
      const options = describeSpeakOptions(action);
      return `${JSON.stringify(said)}${options === '' ? '' : `  ${options}`}`;
    }
    case 'audio':
      return describeAudio(action);
    case 'barge_in':
      return 'playback stopped';
    case 'transfer':
      return describeTransfer(action);
    case 'send_sms':
      return describeSms(action);
    case 'configure_transcription':
      return describeTranscription(action);
    case 'hangup':
      return '';
    default: {
      // An action the simulator does not play (a newer type): show its fields so nothing goes unseen.
      const { type: _type, session_id: _session, receivedAt: _at, ...rest } = action;
      return Object.keys(rest).length > 0 ? JSON.stringify(rest) : '';
    }
  }
}

/** e.g. `languages en-US, de-DE; vocabulary Hotline, descaler`: what the recogniser is told to expect. */
function describeTranscription(action: ShownAction): string {
  const list = (value: unknown): string | undefined => (Array.isArray(value) && value.length > 0 ? value.map(String).join(', ') : undefined);
  const languages = list(action.languages);
  const vocabulary = list(action.custom_vocabulary);
  const parts = [
    ...(typeof action.provider === 'string' ? [`provider ${action.provider}`] : []),
    ...(languages ? [`languages ${languages}`] : []),
    ...(vocabulary ? [`vocabulary ${vocabulary}`] : []),
    ...(action.vad !== undefined ? [`vad ${JSON.stringify(action.vad)}`] : []),
  ];
  return parts.join('; ');
}

/** The echo of a line the caller sent, for piped input where the terminal echoes nothing; `note` says what it did to the playback. */
export function formatCallerLine(text: string, note?: string): string {
  return `you: ${text}${note === undefined ? '' : `   (${note})`}`;
}

export function formatWarning(message: string): string {
  return `! ${message}`;
}

/** --sms-fails: the text message just shown is not sent, and Hotline is told. */
export function formatSmsFailed(): string {
  return `${' '.repeat(TIME_WIDTH + TYPE_WIDTH)}✗ not sent (--sms-fails): the service answers sms_failed`;
}

/** --verbose: an event as it leaves the emulated service. */
export function formatSentEvent(event: { type: string; [field: string]: unknown }): string {
  const { type, session: _session, ...rest } = event;
  const fields = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  return `         → ${type}${fields}`;
}
