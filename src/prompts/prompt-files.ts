import { NOT_INTERRUPTIBLE, type SpeakStyle } from './speak-style.js';

export type PromptName =
  | 'system'
  | 'greeting'
  | 'outboundGreeting'
  | 'outboundGenericGreeting'
  | 'outboundVoicemail'
  | 'error'
  | 'transferFailed'
  | 'giveUpTransfer'
  | 'giveUp'
  | 'thinking'
  | 'thinkingAgain'
  | 'idleGoodbye'
  | 'shutdownGoodbye'
  | 'shutdownTransfer'
  | 'operatorTransfer'
  | 'operatorGoodbye'
  | 'silenceReprompt'
  | 'silenceGoodbye'
  | 'toolHold'
  | 'toolHoldAgain';

/** The reports' prompt, beside the calls' own: the reports read it for each report, the calls never. */
export const REPORT_PROMPT_FILE = 'report.md';

export interface PromptFileSpec {
  readonly name: PromptName;
  readonly file: string;
  /** Used when an optional file is missing or empty, so a half-configured folder still gives a working agent. */
  readonly fallback?: string;
  /** How the line is spoken unless the file's own front matter says otherwise. */
  readonly style?: SpeakStyle;
}

// Without a system prompt or a greeting, Hotline would not be the agent anyone configured: those have no fallback.
// The lines said right before Hotline ends or hands over the call cannot be interrupted: nobody would answer what the caller said.
export const PROMPT_FILES: readonly PromptFileSpec[] = [
  { name: 'system', file: 'system.md' },
  { name: 'greeting', file: 'greeting.md' },
  {
    name: 'outboundGreeting',
    file: 'outbound-greeting.md',
    fallback: 'Hi {{name|there}}, this is an automated assistant calling about {{topic|your recent request}}. Is now a good time to talk?',
  },
  {
    name: 'outboundGenericGreeting',
    file: 'outbound-generic-greeting.md',
    fallback: 'Hello, this is an automated assistant calling. Is now a good time to talk?',
  },
  {
    name: 'outboundVoicemail',
    file: 'outbound-voicemail.md',
    fallback:
      "Hi {{name|there}}, this is the automated assistant calling about {{topic|your recent request}}. Sorry we missed you; please call us back whenever it suits you. Goodbye.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'error',
    file: 'error.md',
    fallback: "I'm sorry, I'm having a little trouble right now. Could you say that again?",
  },
  {
    name: 'transferFailed',
    file: 'transfer-failed.md',
    fallback: "I'm sorry, nobody is available to take your call right now. Can I help you with anything else?",
  },
  {
    name: 'giveUpTransfer',
    file: 'give-up-transfer.md',
    fallback: "I'm sorry, I'm having technical trouble. Let me connect you with a colleague.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'giveUp',
    file: 'give-up.md',
    fallback: "I'm sorry, I'm having technical trouble and can't help right now. Please call again later. Goodbye.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'thinking',
    file: 'thinking.md',
    fallback: 'Let me think about that for a moment.',
  },
  {
    name: 'thinkingAgain',
    file: 'thinking-again.md',
    fallback: "Thanks for waiting, I'm still working on it.",
  },
  {
    name: 'idleGoodbye',
    file: 'idle-goodbye.md',
    fallback: "I haven't heard from you in a while, so I'll end the call now. Goodbye.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'shutdownGoodbye',
    file: 'shutdown-goodbye.md',
    fallback: "I'm sorry, I have to end this call now for maintenance. Please call again in a few minutes. Goodbye.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'shutdownTransfer',
    file: 'shutdown-transfer.md',
    fallback: "I'm sorry, I have to hand this call over now. One moment, I'll connect you with a colleague.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'operatorTransfer',
    file: 'operator-transfer.md',
    fallback: "One moment please, I'll connect you with a colleague now.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'operatorGoodbye',
    file: 'operator-goodbye.md',
    fallback: "I'm sorry, I have to end this call now. Thank you for calling. Goodbye.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'silenceReprompt',
    file: 'silence-reprompt.md',
    fallback: 'Are you still there?',
  },
  {
    name: 'silenceGoodbye',
    file: 'silence-goodbye.md',
    fallback: "I can't hear you, so I'll end the call now. Please call again any time. Goodbye.",
    style: NOT_INTERRUPTIBLE,
  },
  {
    name: 'toolHold',
    file: 'tool-hold.md',
    fallback: "One moment, I'm checking that for you.",
  },
  {
    name: 'toolHoldAgain',
    file: 'tool-hold-again.md',
    fallback: "Thanks for waiting, I'm still on it.",
  },
];

export const PROMPT_FILE_NAMES: readonly string[] = PROMPT_FILES.map((spec) => spec.file);

/** "system.md and greeting.md": the files a folder cannot do without. */
export const REQUIRED_FILES = PROMPT_FILES.filter((spec) => spec.fallback === undefined)
  .map((spec) => spec.file)
  .join(' and ');
