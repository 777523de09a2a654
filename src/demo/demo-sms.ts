import { TEXT_FAILED_MARK } from '../call/caller-texts.js';
import { splitKnowledgeNote } from '../call/knowledge-note.js';
import type { ChatMessage, ChatRequestBody, ScriptedReply } from '../llm/scripted-server.js';

/**
 * The demo model's text messages (the send_sms tool, on with SMS_MAX_PER_CALL): it sends one when
 * the caller asks for a text ("can you text me the address", "schick mir eine SMS"), says what came
 * of it, and apologises when Hotline's note says the service could not send it. Undefined when none
 * of that is the case.
 */

export const SMS_TOOL = 'send_sms';

const TEXT_WORDS = /\b(text me|texting me|send me (a |an )?(text|sms|message)|text it|sms|text message|schick(en sie)? mir|per sms|simsen)\b/;
const ADDRESS_WORDS = /\b(address|directions|where|find you|located|location|map|adresse|anfahrt|weg|wo)\b/;
const ORDER_WORDS = /\b(order|orders|parcel|package|bestellung|paket)\b/;
/** The questions when the caller asks for a text without saying of what, or of which order; the next words answer them. */
const ASK_WHAT = 'What should I text you:';
const ASK_ORDER = 'Which order number should I text you about?';

export function smsReply(request: ChatRequestBody): ScriptedReply | undefined {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return resultReply(request.messages);
  if (last?.role !== 'user') return undefined;
  const content = textOf(last.content);
  if (content.includes(TEXT_FAILED_MARK)) {
    return { content: "I'm sorry, the text message could not be sent. I can tell you the details now instead, or connect you with a colleague." };
  }
  const said = splitKnowledgeNote(content).said.toLowerCase();
  const asked = lastAssistantText(request.messages);
  const order = /\d(?:[\d\s-]*\d)?/.exec(said)?.[0].replace(/[\s-]/g, '');
  const templates = offeredTemplates(request);
  if (asked.includes(ASK_ORDER) && order !== undefined && templates?.includes('order-status')) return sendOrder(order);
  const answersWhat = asked.includes(ASK_WHAT) && (ORDER_WORDS.test(said) || ADDRESS_WORDS.test(said));
  if (!TEXT_WORDS.test(said) && !answersWhat) return undefined;
  if (templates === undefined) return { content: "I'm sorry, I can't send text messages on this call. I'm happy to tell you instead." };
  if (ORDER_WORDS.test(said) && templates.includes('order-status')) {
    return order === undefined ? { content: `Sure. ${ASK_ORDER}` } : sendOrder(order);
  }
  if (ADDRESS_WORDS.test(said) && templates.includes('directions')) {
    return { toolCalls: [{ name: SMS_TOOL, arguments: JSON.stringify({ template: 'directions' }) }] };
  }
  if (templates.length === 0) return { content: "I'm sorry, I have nothing I could text you." };
  return { content: `Happy to. ${ASK_WHAT} ${templates.map((t) => t.replace(/[-_]/g, ' ')).join(', or ')}?` };
}

function sendOrder(order: string): ScriptedReply {
  return { toolCalls: [{ name: SMS_TOOL, arguments: JSON.stringify({ template: 'order-status', fields: { order_id: order } }) }] };
}

/** What the model says when the request ends with send_sms's results; undefined when other tools answered too. */
function resultReply(messages: readonly ChatMessage[]): ScriptedReply | undefined {
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role === 'tool') start--;
  const owner = messages[start - 1];
  const calls = owner?.role === 'assistant' ? (owner.tool_calls ?? []) : [];
  const results = messages.slice(start).flatMap((m) => (m.role === 'tool' ? [m] : []));
  const ours = results.every((r) => calls.find((c) => c.id === r.tool_call_id)?.function.name === SMS_TOOL);
  if (!ours || results.length === 0) return undefined;
  const result = textOf(results.at(-1)!.content);
  if (result.startsWith('Sent')) return { content: "Done: I've sent you a text message. Is there anything else I can help you with?" };
  if (/withheld/.test(result)) return { content: "I'm sorry, I can't send you a text: your number is withheld." };
  if (/the most one call may send/.test(result)) return { content: "I'm sorry, I can't send any more text messages on this call." };
  if (/needs order_id/.test(result)) return { content: `Sure. ${ASK_ORDER}` };
  return { content: "I'm sorry, the text message couldn't be sent." };
}

/** The templates the request offers send_sms with; undefined when it offers no send_sms. */
function offeredTemplates(request: ChatRequestBody): string[] | undefined {
  const tool = (request.tools ?? []).find((t) => t.function.name === SMS_TOOL);
  if (!tool) return undefined;
  const parameters = tool.function.parameters as { properties?: { template?: { enum?: unknown } } } | undefined;
  const names = parameters?.properties?.template?.enum;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [];
}

function lastAssistantText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'assistant') return textOf(message.content ?? '');
  }
  return '';
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : '')).join(' ');
}
