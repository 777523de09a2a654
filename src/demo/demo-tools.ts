import type { ChatMessage, ChatRequestBody, ScriptedReply } from '../llm/scripted-server.js';
import { withoutKnowledgeNote } from '../call/knowledge-note.js';
import { demoPhrases, type DemoPhrases } from './demo-languages.js';

/**
 * The demo model's use of the shipped example tools (prompts/tools/
 * order_status.yaml, book_callback.yaml): it calls one when the caller asks
 * for it, and speaks an answer made from the result. A tool is only called
 * when the request offers it — a tool file whose SHOP_API_URL is unset is not
 * offered, and the model must not call what it was not given. Its words, and
 * the caller's it listens for, are in the language of the request's system
 * prompt (demo-languages.ts).
 */

export const ORDER_TOOL = 'order_status';
export const CALLBACK_TOOL = 'book_callback';

/** Books a callback when the caller asks for one; undefined if they do not. */
export function callbackReply(said: string, request: ChatRequestBody): ScriptedReply | undefined {
  const phrases = demoPhrases(request);
  if (!phrases.callbackWords.test(said)) return undefined;
  if (!offers(request, CALLBACK_TOOL)) return { content: phrases.noCallbacks };
  return { toolCalls: [{ name: CALLBACK_TOOL, arguments: JSON.stringify({ topic: topicOf(said) }) }] };
}

/**
 * Looks up an order the caller asks about — or asks for its number first;
 * a bare number right after that question (or right after the caller's
 * question, when they typed it over the answer) is the answer to it.
 * Undefined if the caller's words are not about an order.
 */
export function orderReply(said: string, request: ChatRequestBody): ScriptedReply | undefined {
  const phrases = demoPhrases(request);
  const number = numberIn(said);
  const followsQuestion = (): boolean =>
    lastAssistantText(request).includes(phrases.askForNumber) || phrases.orderWords.test(previousUserText(request).toLowerCase());
  const aboutOrder = phrases.orderWords.test(said) || (number !== undefined && followsQuestion());
  if (!aboutOrder) return undefined;
  if (number === undefined) return { content: phrases.askOrderNumber };
  if (!offers(request, ORDER_TOOL)) return { content: phrases.noOrderSystem(number) };
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
  const phrases = demoPhrases(request);
  const sentences = results.map(({ name, args, content }) => {
    if (name === ORDER_TOOL) return orderAnswer(stringField(args, 'order_number') ?? phrases.numberYouGave, content, phrases);
    if (name === CALLBACK_TOOL) return callbackAnswer(content, phrases);
    return phrases.toolAnswered(name);
  });
  return { content: sentences.join(' ') };
}

function orderAnswer(number: string, content: string, phrases: DemoPhrases): string {
  const order = jsonObject(content);
  if (order !== undefined) {
    const n = stringField(order, 'number') ?? number;
    const carrier = stringField(order, 'carrier');
    const arrives = stringField(order, 'expected_delivery');
    switch (order.status) {
      case 'shipped':
        return phrases.shipped({ number: n, carrier, when: arrives });
      case 'packing':
        return phrases.packing({ number: n, carrier, when: arrives });
      case 'delivered':
        return phrases.delivered({ number: n, carrier, when: stringField(order, 'delivered') });
      default:
        return typeof order.status === 'string' ? phrases.orderStatus(n, order.status) : phrases.orderFound(n);
    }
  }
  if (/\bno order\b|\bnot found\b|\bHTTP 404\b/i.test(content)) return phrases.orderNotFound(number);
  return phrases.orderSystemDown;
}

function callbackAnswer(content: string, phrases: DemoPhrases): string {
  const callback = jsonObject(content);
  if (callback !== undefined) return phrases.callbackBooked(stringField(callback, 'when'), stringField(callback, 'id'));
  if (/caller_number: missing/.test(content)) return phrases.numberWithheld;
  return phrases.callbackFailed;
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
