import type { ChatMessage, ChatRequestBody, ScriptedReply } from '../llm/scripted-server.js';
import { withoutKnowledgeNote } from '../call/knowledge-note.js';

/**
 * The demo model's use of the shipped example tools (prompts/tools/
 * order_status.yaml, book_callback.yaml): it calls one when the caller asks
 * for it, and speaks an answer made from the result. A tool is only called
 * when the request offers it — a tool file whose SHOP_API_URL is unset is not
 * offered, and the model must not call what it was not given.
 */

export const ORDER_TOOL = 'order_status';
export const CALLBACK_TOOL = 'book_callback';

const ORDER_WORDS = /\b(order|orders|parcel|package|delivery|shipment|bestellung|paket|lieferung)\b/;
const CALLBACK_WORDS = /\b(call me back|call back|callback|ring me back|rückruf|zurückrufen)\b/;
/** Part of the question for the number, and how the next turn knows a bare number is one. */
const ASK_FOR_NUMBER = "What's your order number?";

/** Books a callback when the caller asks for one; undefined if they do not. */
export function callbackReply(said: string, request: ChatRequestBody): ScriptedReply | undefined {
  if (!CALLBACK_WORDS.test(said)) return undefined;
  if (!offers(request, CALLBACK_TOOL)) return { content: "I'm sorry, I can't book callbacks right now. Would you like me to connect you with a colleague instead?" };
  return { toolCalls: [{ name: CALLBACK_TOOL, arguments: JSON.stringify({ topic: topicOf(said) }) }] };
}

/**
 * Looks up an order the caller asks about — or asks for its number first;
 * a bare number right after that question (or right after the caller's
 * question, when they typed it over the answer) is the answer to it.
 * Undefined if the caller's words are not about an order.
 */
export function orderReply(said: string, request: ChatRequestBody): ScriptedReply | undefined {
  const number = numberIn(said);
  const followsQuestion = (): boolean =>
    lastAssistantText(request).includes(ASK_FOR_NUMBER) || ORDER_WORDS.test(previousUserText(request).toLowerCase());
  const aboutOrder = ORDER_WORDS.test(said) || (number !== undefined && followsQuestion());
  if (!aboutOrder) return undefined;
  if (number === undefined) {
    return { content: `Sure, I can check that for you. ${ASK_FOR_NUMBER} You can also type it on the keypad, then the hash key.` };
  }
  if (!offers(request, ORDER_TOOL)) return { content: `I'm sorry, I can't look up order ${number} right now: no order system is connected.` };
  return { toolCalls: [{ name: ORDER_TOOL, arguments: JSON.stringify({ order_number: number }) }] };
}

/**
 * When the request ends with tool results, the answer made of them: the
 * model has called a tool and now says what came of it. Undefined when the
 * caller spoke last.
 */
export function toolResultReply(request: ChatRequestBody): ScriptedReply | undefined {
  const results = trailingToolResults(request.messages);
  if (results.length === 0) return undefined;
  const sentences = results.map(({ name, args, content }) => {
    if (name === ORDER_TOOL) return orderAnswer(stringField(args, 'order_number') ?? 'you gave', content);
    if (name === CALLBACK_TOOL) return callbackAnswer(content);
    return `The ${name || 'tool'} answered.`;
  });
  return { content: sentences.join(' ') };
}

function orderAnswer(number: string, content: string): string {
  const order = jsonObject(content);
  if (order !== undefined) {
    const n = stringField(order, 'number') ?? number;
    const carrier = stringField(order, 'carrier');
    const arrives = stringField(order, 'expected_delivery');
    switch (order.status) {
      case 'shipped':
        return `Your order ${n} has shipped${carrier ? ` with ${carrier}` : ''} and should arrive ${arrives ?? 'soon'}.`;
      case 'packing':
        return `Your order ${n} is being packed right now and should arrive ${arrives ?? 'soon'}.`;
      case 'delivered':
        return `Your order ${n} was delivered ${stringField(order, 'delivered') ?? 'already'}.`;
      default:
        return typeof order.status === 'string' ? `The status of your order ${n} is: ${order.status}.` : `I found your order ${n}.`;
    }
  }
  if (/\bno order\b|\bnot found\b|\bHTTP 404\b/i.test(content)) {
    return `I'm sorry, I couldn't find an order with the number ${number}. Could you check the number and tell me again?`;
  }
  return "I'm sorry, I can't reach our order system right now. Would you like me to connect you with a colleague?";
}

function callbackAnswer(content: string): string {
  const callback = jsonObject(content);
  if (callback !== undefined) {
    const when = stringField(callback, 'when') ?? 'soon';
    const id = stringField(callback, 'id');
    return `Done: a colleague will call you back ${when}.${id ? ` Your reference is ${id}.` : ''}`;
  }
  if (/caller_number: missing/.test(content)) return "I'm sorry, I can't book a callback: your number is withheld.";
  return "I'm sorry, I couldn't book the callback. Would you like me to connect you with a colleague instead?";
}

interface CalledTool {
  name: string;
  args: Record<string, unknown> | undefined;
  content: string;
}

/** The tool messages at the end of the conversation, each with the call it answers. */
function trailingToolResults(messages: readonly ChatMessage[]): CalledTool[] {
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role === 'tool') start--;
  const owner = messages[start - 1];
  const calls = owner?.role === 'assistant' ? (owner.tool_calls ?? []) : [];
  return messages.slice(start).flatMap((message) => {
    if (message.role !== 'tool') return [];
    const call = calls.find((c) => c.id === message.tool_call_id);
    const content = typeof message.content === 'string' ? message.content : message.content.map((part) => part.text).join('');
    return [{ name: call?.function.name ?? '', args: call ? jsonObject(call.function.arguments) : undefined, content }];
  });
}

function offers(request: ChatRequestBody, name: string): boolean {
  return (request.tools ?? []).some((tool) => tool.function.name === name);
}

/** Digits said or typed, "4711", "47 11" and "[keypad] 4711" alike. */
function numberIn(said: string): string | undefined {
  const match = /\d(?:[\d\s-]*\d)?/.exec(said);
  return match ? match[0].replace(/[\s-]/g, '') : undefined;
}

function topicOf(said: string): string {
  const words = said.replace(/\s+/g, ' ').trim();
  return words.length > 80 ? `${words.slice(0, 77)}...` : words;
}

/** What the assistant said last, for whether it asked for a number. */
function lastAssistantText(request: ChatRequestBody): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role !== 'assistant') continue;
    const { content } = message;
    if (typeof content === 'string') return content;
    return (content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
  }
  return '';
}

/** The caller's words before their last ones, for whether a bare number answers an order question. */
function previousUserText(request: ChatRequestBody): string {
  const said = request.messages.flatMap((m) => (m.role === 'user' && typeof m.content === 'string' ? [m.content] : []));
  // An earlier turn's note, if the history keeps it, may name an order: only the caller's words count.
  return withoutKnowledgeNote(said.at(-2) ?? '');
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function stringField(record: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = record?.[key];
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
