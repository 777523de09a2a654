import { splitKnowledgeNote } from '../call/knowledge-note.js';
import { knowledgeReply } from './demo-knowledge.js';
import { demoReportReply } from './demo-report.js';
import { smsReply } from './demo-sms.js';
import { callbackReply, orderReply, toolResultReply } from './demo-tools.js';
import type { ChatRequestBody, ScriptedReply } from '../llm/scripted-server.js';
import { demoPhrases } from './demo-languages.js';

/**
 * The built-in demo model: scripted replies that show what Hotline does —
 * streamed answers, the speak tool, business tools (an order lookup, a
 * callback), a transfer when a person is asked for, a goodbye and hangup.
 * Replies are chosen from the caller's last words, or from a tool's result;
 * the note of the business's documents Hotline adds to those words is read
 * only when no rule on the words answers (demo-knowledge.ts).
 * A call report request (`response_format` named call_report) gets a JSON object that fits its schema.
 * It answers in the language of the system prompt it is given: English, German, Turkish or Arabic.
 */
export function demoScript(request: ChatRequestBody): ScriptedReply {
  const report = demoReportReply(request);
  if (report) return report;
  const sms = smsReply(request);
  if (sms) return sms;
  // A tool it called has answered: the caller's words were already dealt with.
  const fromTool = toolResultReply(request);
  if (fromTool) return fromTool;
  // The rules match the caller's words only: a passage of the note saying "open" or "order" is not the caller asking.
  const message = splitKnowledgeNote(lastUserText(request));
  const said = message.said.toLowerCase();
  // In the language of the system prompt: a call in German is given the German prompts (demo-languages.ts).
  const phrases = demoPhrases(request);
  // Before the person rule: "can someone call me back" asks for a callback, not a transfer.
  const callback = callbackReply(said, request);
  if (callback) return callback;
  if (phrases.person.test(said)) {
    return {
      content: phrases.transfer,
      toolCalls: [{ name: 'transfer', arguments: '{}' }],
    };
  }
  if (phrases.bye.test(said)) {
    return { content: phrases.goodbye, toolCalls: [{ name: 'hangup', arguments: '{}' }] };
  }
  // Before the address rule: "where is my order" is about the order.
  const order = orderReply(said, request);
  if (order) return order;
  if (phrases.wait.test(said)) {
    return { content: phrases.listening };
  }
  if (phrases.hours.test(said)) {
    return { content: phrases.hoursAnswer };
  }
  if (phrases.prices.test(said)) {
    return { content: phrases.pricesAnswer };
  }
  if (phrases.address.test(said)) {
    // Shown through the speak tool: its argument streams into speech just like plain text.
    return { toolCalls: [{ name: 'speak', arguments: JSON.stringify({ text: phrases.addressAnswer }) }] };
  }
  if (phrases.about.test(said)) {
    return { content: phrases.aboutAnswer };
  }
  const fromDocuments = knowledgeReply(message, phrases);
  if (fromDocuments) return fromDocuments;
  const words = said.replace(/[\s.!?…]+$/u, '');
  const echo = words.length > 80 ? `${words.slice(0, 77)}...` : words;
  // The echo's length is the caller's: a short first sentence keeps the first words as quick as any answer's.
  return { content: phrases.echo(echo) };
}

function lastUserText(request: ChatRequestBody): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role !== 'user') continue;
    const content: unknown = message.content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
      return content.map((part: unknown) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : '')).join(' ');
    }
  }
  return '';
}
