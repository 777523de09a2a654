import { command, numberOption, parseCommandLine, UsageError, wantsHelp, type CommandLine } from '../command-line.js';
import { hotlineWebSocketUrl } from '../hotline-address.js';
import { CALLER_COMMANDS } from './caller-input.js';
import { MAILBOX_GREETINGS, type PersonAnswer } from './person-called.js';

export { UsageError };

export const USAGE = `Usage:
  npm run simulate -- [--url ws://localhost:3000/ws | --webhook <url>] [options]
      Calls a running Hotline as the voice service would, and lets you be the caller:
      type what the caller says, one line at a time; /hangup or Ctrl-D ends the call.
      Keys, silence and the older barge-in are commands (below).
      Piped input works too: printf 'hello\\n/dtmf 4711#\\nbye\\n' | npm run simulate
      (each line waits for Hotline's whole answer: the speak that ends its turn, after any hold lines)

  npm run simulate -- --platform [--port 4000] [--url ws://localhost:3000/ws] [options]
      Emulates the voice service's outbound API (POST /v3/ai-flows/:id/call). Start Hotline with
      AIFLOW_API_URL=http://localhost:<port>; each call it places rings Hotline back, and you
      play the person called (or their mailbox answers, nobody does, or the line is busy).

Caller commands (typed as a line of their own):
${CALLER_COMMANDS.map(([name, what]) => `  ${name.padEnd(24)}${what}`).join('\n')}

Connection:
  --url <ws url>          Hotline's WebSocket (default: /ws at BOT_URL, else ws://localhost:PORT/ws with PORT
                          as Hotline has it, else ws://localhost:3000/ws; all also read from .env)
  --webhook <url>         use the webhook transport instead, e.g. http://localhost:3000/webhook
  --token <token>         WebSocket token, sent as ?token= (default: WS_TOKEN)
  --secret <secret>       webhook X-API-TOKEN (default: WEBHOOK_SECRET)

The call:
  --outbound              session_start with direction "outbound" (default inbound)
  --from <number>         from_phone_number (default 4915100000000)
  --to <number>           to_phone_number (default 4930000000)
  --json <file>           write every event and action of the call to this file at the end

Playback:
  --wpm <n>               speaking rate of the emulated voice (default 180)
  --speed <factor>        divide every speaking time by this (default 1)
  --answer-timeout-ms <n> with piped input, stop waiting for an answer after this long (default 15000)
  --no-wait               with piped input, send each line as soon as it is read (lines can barge in)
  --verbose               also print every event sent
  --sms-fails             the service fails every text message (send_sms): it answers with sms_failed

Outbound emulator (--platform):
  --port <port>                 port to listen on (default 4000)
  --host <host>                 address to listen on (default 127.0.0.1)
  --platform-token <token>      the only access token accepted (default: AIFLOW_ACCESS_TOKEN; else any Bearer token)
  --flow-number <number>        the AI flow's number, the caller ID of its calls (default 4930000000)
  --flow-without-number <id>    this flow has no phone number: 400 (repeatable)
  --unknown-flow <id>           this flow does not exist: 404 (repeatable)
  --mailbox <number>            calls to this number reach its mailbox: the greeting comes as the caller's
                                words, then a beep, and the mailbox records Hotline until it hangs up (repeatable)
  --mailbox-greeting <text>     what the mailbox says: en (a carrier's English greeting, the default),
                                de (a German one), or the text itself, sentence by sentence
  --no-answer <number>          nobody answers calls to this number: Hotline is never rung (repeatable)
  --busy <number>               this number is busy: Hotline gets only a session_end with reason "busy"
                                for a session it never saw (the emulator's guess; repeatable)
  --person-says <line>          the person called says this line on every call, instead of you (repeatable,
                                in order; they hang up after the answer to the last). Calls then run side by
                                side, as the real service runs them, until Ctrl-C; each line is tagged with
                                the number called

Example:
  npm run simulate -- --url ws://localhost:3000/ws --outbound --json call.json

Exit codes: 0 the call ended normally, 1 Hotline refused or could not be reached, 2 bad usage.`;

export type HotlineTarget = { kind: 'websocket'; url: string; token?: string } | { kind: 'webhook'; url: string; secret?: string };

export interface VoiceSettings {
  wpm: number;
  speed: number;
  answerTimeoutMs: number;
  /** Piped input: send lines at once instead of waiting for each answer. */
  noWait: boolean;
  verbose: boolean;
  /** Every send_sms fails: the service answers it with sms_failed. */
  smsFails?: boolean;
}

export interface CallSettings {
  mode: 'call';
  target: HotlineTarget;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string;
  voice: VoiceSettings;
  jsonFile?: string;
}

export interface PlatformSettings {
  mode: 'platform';
  port: number;
  host: string;
  /** Where a placed call rings. */
  target: HotlineTarget;
  platformToken?: string;
  flowNumber: string;
  flowsWithoutNumber: string[];
  unknownFlows: string[];
  /** How calls to these numbers are answered; every other number by you, at the terminal. */
  answers: Record<string, PersonAnswer>;
  mailboxGreeting?: string;
  /** What the person called says on every call; calls then run side by side. */
  personScript?: string[];
  voice: VoiceSettings;
}

export type Settings = { mode: 'help' } | CallSettings | PlatformSettings;

export const DEFAULT_CALLER_NUMBER = '4915100000000';
export const DEFAULT_FLOW_NUMBER = '4930000000';
const DEFAULT_PLATFORM_PORT = 4000;

const ABOVE_ZERO = { aboveMin: true } as const;
const PLATFORM_ONLY = [
  'port',
  'host',
  'platform-token',
  'flow-number',
  'flow-without-number',
  'unknown-flow',
  'mailbox',
  'mailbox-greeting',
  'no-answer',
  'busy',
  'person-says',
] as const;
const CALL_ONLY = ['outbound', 'from', 'to', 'json'] as const;

const SIMULATE = command({
  name: 'simulate',
  usage: USAGE,
  allowPositionals: false,
  options: {
    url: { type: 'string' },
    webhook: { type: 'string' },
    token: { type: 'string' },
    secret: { type: 'string' },
    outbound: { type: 'boolean' },
    from: { type: 'string' },
    to: { type: 'string' },
    json: { type: 'string' },
    wpm: { type: 'string' },
    speed: { type: 'string' },
    'answer-timeout-ms': { type: 'string' },
    'no-wait': { type: 'boolean' },
    verbose: { type: 'boolean' },
    'sms-fails': { type: 'boolean' },
    platform: { type: 'boolean' },
    port: { type: 'string' },
    host: { type: 'string' },
    'platform-token': { type: 'string' },
    'flow-number': { type: 'string' },
    'flow-without-number': { type: 'string', multiple: true },
    'unknown-flow': { type: 'string', multiple: true },
    mailbox: { type: 'string', multiple: true },
    'mailbox-greeting': { type: 'string' },
    'no-answer': { type: 'string', multiple: true },
    busy: { type: 'string', multiple: true },
    'person-says': { type: 'string', multiple: true },
  },
});

type Values = CommandLine<typeof SIMULATE.options, false>['values'];

export function parseSettings(argv: string[], env: Record<string, string | undefined>): Settings {
  const commandLine = parseCommandLine(SIMULATE, argv);
  if (wantsHelp(commandLine)) return { mode: 'help' };
  const { values } = commandLine;
  const platform = values.platform ?? false;
  const misplaced = (platform ? CALL_ONLY : PLATFORM_ONLY).filter((name) => values[name] !== undefined);
  if (misplaced.length > 0) {
    const where = platform ? 'only without --platform' : 'only with --platform';
    throw new UsageError(`${misplaced.map((name) => `--${name}`).join(', ')} can be used ${where}.`);
  }
  const target = targetFrom(values, env);
  const voice: VoiceSettings = {
    wpm: numberOption('--wpm', values.wpm, 180, ABOVE_ZERO),
    speed: numberOption('--speed', values.speed, 1, ABOVE_ZERO),
    answerTimeoutMs: numberOption('--answer-timeout-ms', values['answer-timeout-ms'], 15_000, ABOVE_ZERO),
    noWait: values['no-wait'] ?? false,
    verbose: values.verbose ?? false,
    ...(values['sms-fails'] ? { smsFails: true } : {}),
  };
  if (platform) {
    const port = values.port === undefined ? DEFAULT_PLATFORM_PORT : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, not "${values.port}".`);
    const platformToken = nonEmpty(values['platform-token']) ?? nonEmpty(env.AIFLOW_ACCESS_TOKEN);
    const mailboxGreeting = greetingFrom(values['mailbox-greeting']);
    const personScript = values['person-says']?.map((line) => line.trim()).filter((line) => line !== '');
    if (personScript?.length === 0) throw new UsageError('--person-says needs a line to say.');
    return {
      mode: 'platform',
      port,
      host: nonEmpty(values.host) ?? '127.0.0.1',
      target,
      ...(platformToken === undefined ? {} : { platformToken }),
      flowNumber: phoneNumber('--flow-number', values['flow-number'], DEFAULT_FLOW_NUMBER),
      flowsWithoutNumber: values['flow-without-number'] ?? [],
      unknownFlows: values['unknown-flow'] ?? [],
      answers: answersFrom(values),
      ...(mailboxGreeting === undefined ? {} : { mailboxGreeting }),
      ...(personScript === undefined ? {} : { personScript }),
      voice,
    };
  }
  const jsonFile = nonEmpty(values.json);
  return {
    mode: 'call',
    target,
    direction: values.outbound ? 'outbound' : 'inbound',
    from: phoneNumber('--from', values.from, DEFAULT_CALLER_NUMBER),
    to: phoneNumber('--to', values.to, DEFAULT_FLOW_NUMBER),
    voice,
    ...(jsonFile === undefined ? {} : { jsonFile }),
  };
}

function targetFrom(values: Values, env: Record<string, string | undefined>): HotlineTarget {
  const webhook = nonEmpty(values.webhook);
  if (webhook !== undefined) {
    if (values.url !== undefined) throw new UsageError('Give either --url (WebSocket) or --webhook, not both.');
    if (values.token !== undefined) throw new UsageError('--token is the WebSocket token; the webhook uses --secret.');
    const secret = nonEmpty(values.secret) ?? nonEmpty(env.WEBHOOK_SECRET);
    return { kind: 'webhook', url: webhook, ...(secret === undefined ? {} : { secret }) };
  }
  if (values.secret !== undefined) throw new UsageError('--secret is the webhook secret; the WebSocket uses --token.');
  const token = nonEmpty(values.token) ?? nonEmpty(env.WS_TOKEN);
  return { kind: 'websocket', url: nonEmpty(values.url) ?? hotlineWebSocketUrl(env), ...(token === undefined ? {} : { token }) };
}

/** --mailbox, --no-answer and --busy as one map; a number given to two of them is a mistake worth saying. */
function answersFrom(values: Values): Record<string, PersonAnswer> {
  const answers: Record<string, PersonAnswer> = {};
  const flags = [
    ['--mailbox', values.mailbox, 'mailbox'],
    ['--no-answer', values['no-answer'], 'no_answer'],
    ['--busy', values.busy, 'busy'],
  ] as const;
  const flagOf: Record<string, string> = {};
  for (const [flag, numbers, answer] of flags) {
    for (const raw of numbers ?? []) {
      const number = phoneNumber(flag, raw, '');
      const earlier = flagOf[number];
      if (earlier !== undefined && earlier !== flag) throw new UsageError(`${number} is given to both ${earlier} and ${flag}; give it to one.`);
      flagOf[number] = flag;
      answers[number] = answer;
    }
  }
  return answers;
}

function greetingFrom(raw: string | undefined): string | undefined {
  const text = nonEmpty(raw);
  if (text === undefined) return undefined;
  return text === 'en' || text === 'de' ? MAILBOX_GREETINGS[text] : text;
}

function phoneNumber(flag: string, raw: string | undefined, fallback: string): string {
  if (raw === undefined) return fallback;
  // The service sends digits only, without +; accept what people type and send what the service would.
  const digits = raw.replace(/[\s()./-]/g, '').replace(/^\+/, '');
  if (!/^\d{3,15}$/.test(digits)) throw new UsageError(`${flag} must be a phone number, not "${raw}".`);
  return digits;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
