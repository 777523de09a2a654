/**
 * The caller of an eval, played by a model: it reads what the agent said as
 * the caller heard it, and answers in the persona's words, presses keys, stays
 * silent or hangs up — each a tool, so no reply has to be parsed for intent.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { languageName } from '../language/language-tag.js';
import { parseDtmfKeys } from '../simulator/dtmf.js';
import type { CallerMove } from './eval-schema.js';
import { EvalModelError, type RoleClient } from './eval-models.js';
import type { TranscriptLine } from './heard-transcript.js';

/** A move, and whether the caller hangs up once the agent has answered it (words said while leaving). */
export type CallerTurn = CallerMove & { thenHangUp?: boolean };

export const CALLER_TOOLS: ChatCompletionTool[] = [
  tool('hang_up', 'End the call: your goal is reached, the agent said goodbye, or you give up.', {}),
  tool('press_keys', 'Type digits on the phone keypad, when asked to.', {
    keys: { type: 'string', description: 'The keys: 0-9, * and #' },
  }),
  tool('stay_silent', 'Say nothing this turn.', {}),
];

/** `language`: the eval's, the language the caller speaks (a tag: `de`). */
export function callerInstructions(persona: string, language?: string): string {
  const lines = [
    "You are playing a caller on a telephone call with a business's phone agent, to test that agent. Stay in your role:",
    '',
    persona,
    '',
    'Each message you get is what the agent just said to you. Answer with only the words you say next: short, natural',
    'phone speech, one or two sentences, no stage directions, no narration. Do not help the agent more than the person',
    'you play would. When your goal is reached or the agent says goodbye, say goodbye and call hang_up. Call press_keys',
    'to type digits on the keypad when you are asked to, and stay_silent to say nothing.',
  ];
  if (language !== undefined) {
    const name = languageName(language);
    lines.push(
      '',
      `You speak ${name} (${languageName(language, language)}): every word you say is in ${name}, written as a speech recogniser`,
      `would write ${name}, whatever language the agent speaks. Only if you are clearly not understood, say so in ${name}.`,
    );
  }
  return lines.join('\n');
}

/** Said in place of the agent's words when a message must come from the agent and it said nothing. */
const AGENT_SAID_NOTHING = '(The agent says nothing.)';
const INTERRUPT_NOW = '(The agent is still talking. You cut in now: say what you interrupt with.)';

export function callerMessages(
  persona: string,
  lines: readonly TranscriptLine[],
  interrupting: boolean,
  language?: string,
): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: callerInstructions(persona, language) }];
  const push = (role: 'user' | 'assistant', text: string): void => {
    const last = messages.at(-1);
    if (last && last.role === role && typeof last.content === 'string') last.content = `${last.content} ${text}`;
    else messages.push({ role, content: text });
  };
  for (const line of lines) {
    if (line.who === 'agent') push('user', line.cut ? `${line.text} —` : line.text);
    else if (line.kind === 'keys') push('assistant', `(presses ${line.text})`);
    else if (line.kind === 'silence') push('assistant', '(says nothing)');
    else push('assistant', line.text);
  }
  if (messages.length === 1 || messages.at(-1)?.role === 'assistant') push('user', AGENT_SAID_NOTHING);
  if (interrupting) push('user', INTERRUPT_NOW);
  return messages;
}

export class SimulatedCaller {
  constructor(
    private readonly persona: string,
    private readonly client: RoleClient,
    /** The eval's language: the caller speaks it. */
    private readonly language?: string,
  ) {}

  async next(lines: readonly TranscriptLine[], interrupting: boolean, signal: AbortSignal): Promise<CallerTurn> {
    const answer = await this.client.ask(
      { messages: callerMessages(this.persona, lines, interrupting, this.language), tools: CALLER_TOOLS, ...(interrupting ? { tool_choice: 'none' } : {}) },
      signal,
    );
    const message = answer.choices[0]?.message;
    if (!message) throw new EvalModelError('caller', 'answered without a message');
    const words = (message.content ?? '').trim();
    for (const call of message.tool_calls ?? []) {
      if (call.type !== 'function') continue;
      if (call.function.name === 'hang_up') return words === '' ? { hang_up: true } : { say: words, thenHangUp: true };
      if (call.function.name === 'stay_silent') return { silence: true };
      if (call.function.name === 'press_keys') {
        const keys = parseDtmfKeys(keysOf(call.function.arguments));
        if (!keys.ok) throw new EvalModelError('caller', `pressed keys that are not on a keypad: ${keys.problem}`);
        return { dtmf: keys.keys };
      }
    }
    return words === '' ? { silence: true } : { say: words };
  }
}

function keysOf(argumentsText: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (parsed && typeof parsed === 'object' && 'keys' in parsed) return String(parsed.keys);
  } catch {
    // Named as unreadable below.
  }
  return '';
}

function tool(name: string, description: string, properties: Record<string, unknown>): ChatCompletionTool {
  return {
    type: 'function',
    function: { name, description, parameters: { type: 'object', properties, required: Object.keys(properties) } },
  };
}
