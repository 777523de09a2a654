/**
 * The network phase's conversation, shared by the callers, the scripted model and business
 * system on the far side of the link, and the warm client that measures the baseline: what a
 * caller says in a turn, what the model answers (a tool call first in a tool turn), what the
 * business system returns, and the tool file Hotline is given. Every reply carries its turn's tag
 * in every sentence, so each request and each speak is matched to its turn.
 */
import type { ChatMessage, ChatRequestBody } from '../src/llm/chat-request.js';
import type { ScriptedReply } from '../src/llm/scripted-server.js';
import { tokenize } from '../src/llm/tokenize.js';
import { completingTokenIndices } from './baselines.js';

export type TurnKind = 'plain' | 'tool';

/** The business tool Hotline is given, and the variable its file reads the business system's address from. */
export const TOOL_NAME = 'order_status';
export const SHOP_URL_VARIABLE = 'BENCH_SHOP_URL';

/** A tool file as a user would write one (see prompts/tools/order_status.yaml). */
export const TOOL_FILE = `# The network bench's business tool: an order lookup on the far side of the link.
description: >-
  Looks up an order by its order number: its status, the carrier and when it should arrive.
  Use it when the caller asks about an order.
parameters:
  type: object
  properties:
    order_number:
      type: string
      description: The order number as the caller said it.
  required: [order_number]
  additionalProperties: false
request:
  method: GET
  url: "\${${SHOP_URL_VARIABLE}}/orders/{{order_number}}"
  headers:
    Accept: application/json
timeout_ms: 4000
response:
  path: order
side_effect: false
`;

const TAG_PREFIX = 'Nw';
const TAG_LETTERS = 4;
const TAG_PATTERN = /Nw[a-z]{4}/g;

/**
 * The tag of the id-th turn: letters only and of one length, so each is one token of the same
 * size and every reply takes the model the same time, whichever turn it answers.
 */
export function networkTag(id: number): string {
  let rest = id;
  let letters = '';
  for (let i = 0; i < TAG_LETTERS; i++) {
    letters = String.fromCharCode(97 + (rest % 26)) + letters;
    rest = Math.floor(rest / 26);
  }
  return `${TAG_PREFIX}${letters}`;
}

export function callerWords(kind: TurnKind, tag: string): string {
  return kind === 'tool' ? `Where is my order ${tag}?` : `Can you move my appointment ${tag} to Thursday?`;
}

/** A plain turn's answer: a short first sentence, as a phone agent's usually is. */
export function plainAnswer(tag: string): string {
  return `Of course, ${tag}. Your appointment ${tag} is moved to Thursday at 3:30 in the afternoon. Shall I confirm ${tag} by text message?`;
}

/** A tool turn's answer, once the tool's result is in. */
export function toolAnswer(tag: string): string {
  return `Found it, ${tag}. Your order ${tag} left our warehouse yesterday and arrives tomorrow. Is there anything else about ${tag}?`;
}

export function toolArguments(tag: string): string {
  return JSON.stringify({ order_number: tag });
}

/** What the business system answers for an order. */
export function businessAnswer(orderNumber: string): string {
  return JSON.stringify({ order: { number: orderNumber, status: 'shipped', carrier: 'Parcel Express', arrives: 'tomorrow' } });
}

/** Sentences Hotline speaks of an answer: the same for every tag. */
export function expectedSpeaks(kind: TurnKind): number {
  const text = kind === 'tool' ? toolAnswer(networkTag(0)) : plainAnswer(networkTag(0));
  return completingTokenIndices(tokenize(text)).length;
}

/** Which of its requests a turn is making. */
export type ModelRole = 'answer' | 'tool-call' | 'tool-answer' | 'untraced';

export interface ModelDecision {
  role: ModelRole;
  tag: string | undefined;
  /** Whether the request offered the bench's tool: a tool turn without it is a broken setup. */
  toolOffered: boolean;
  reply: ScriptedReply;
}

function messageText(message: ChatMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** The tag in the caller's last words, wherever Hotline put them in the request. */
function lastUserTag(messages: readonly ChatMessage[]): { tag: string; text: string } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== 'user') continue;
    const text = messageText(message);
    const tag = [...text.matchAll(TAG_PATTERN)].at(-1)?.[0];
    return tag === undefined ? undefined : { tag, text };
  }
  return undefined;
}

/** The scripted model: answers a plain turn, calls the tool in a tool turn and answers once its result is in. */
export function decide(body: ChatRequestBody): ModelDecision {
  const toolOffered = (body.tools ?? []).some((tool) => tool.function.name === TOOL_NAME);
  const asked = lastUserTag(body.messages);
  if (!asked) return { role: 'untraced', tag: undefined, toolOffered, reply: { content: 'Sorry, could you say that again?' } };
  const { tag, text } = asked;
  if (body.messages.at(-1)?.role === 'tool') return { role: 'tool-answer', tag, toolOffered, reply: { content: toolAnswer(tag) } };
  if (text.startsWith('Where is my order') && toolOffered) {
    return { role: 'tool-call', tag, toolOffered, reply: { toolCalls: [{ name: TOOL_NAME, arguments: toolArguments(tag) }] } };
  }
  return { role: 'answer', tag, toolOffered, reply: { content: plainAnswer(tag) } };
}

export function tagIn(text: string): string | undefined {
  return [...text.matchAll(TAG_PATTERN)].at(-1)?.[0];
}
