import { splitKnowledgeNote } from '../call/knowledge-note.js';
import { knowledgeReply } from './demo-knowledge.js';
import { demoReportReply } from './demo-report.js';
import { smsReply } from './demo-sms.js';
import { callbackReply, orderReply, toolResultReply } from './demo-tools.js';
import type { ChatRequestBody, ScriptedReply } from '../llm/scripted-server.js';

/**
 * The built-in demo model: scripted replies that show what Hotline does —
 * streamed answers, the speak tool, business tools (an order lookup, a
 * callback), a transfer when a person is asked for, a goodbye and hangup.
 * Replies are chosen from the caller's last words, or from a tool's result;
 * the note of the business's documents Hotline adds to those words is read
 * only when no rule on the words answers (demo-knowledge.ts).
 * A call report request (`response_format` named call_report) gets a JSON object that fits its schema.
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
  // Before the person rule: "can someone call me back" asks for a callback, not a transfer.
  const callback = callbackReply(said, request);
  if (callback) return callback;
  if (/\b(human|person|agent|someone|somebody|representative|operator|colleague|mensch|mitarbeiter)\b/.test(said)) {
    return {
      content: "Of course. One moment, I'll connect you with a colleague.",
      toolCalls: [{ name: 'transfer', arguments: '{}' }],
    };
  }
  if (/\b(bye|goodbye|that's all|that is all|nothing else|no thanks|tschüss|auf wiederhören)\b/.test(said)) {
    return { content: 'Thanks for calling, and have a lovely day. Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] };
  }
  // Before the address rule: "where is my order" is about the order.
  const order = orderReply(said, request);
  if (order) return order;
  if (/^(wait|stop|sorry|hold on|one moment)\b/.test(said)) {
    return { content: "Sure, I'm listening." };
  }
  if (/\b(hours|open|close|closing|opening)\b/.test(said)) {
    return {
      content:
        "We're open Monday to Friday from 9 a.m. to 6 p.m. On Saturdays, we're open from 10 a.m. to 2 p.m. Is there anything else I can help you with?",
    };
  }
  if (/\b(price|prices|cost|costs|how much|fee)\b/.test(said)) {
    return {
      content:
        'A standard appointment is $49.50, and the first consultation is free. Would you like me to book one for you?',
    };
  }
  if (/\b(where|address|located|location|find you)\b/.test(said)) {
    // Shown through the speak tool: its argument streams into speech just like plain text.
    return {
      toolCalls: [
        {
          name: 'speak',
          arguments: JSON.stringify({
            text: "We're at 12 Market Street, right next to the station. There's free parking behind the building.",
          }),
        },
      ],
    };
  }
  if (/\b(tell me|story|more|explain|about you|what can you do)\b/.test(said)) {
    return {
      content:
        "I'm Hotline's demo model, and I'm here to show how a phone agent should feel. Every sentence you hear is sent to the voice service " +
        'the moment it is complete, so you never wait for the whole answer. If you interrupt me, I stop at once and forget what you ' +
        "didn't hear. When you ask for a person, I transfer you after my last sentence has played. And when you say goodbye, " +
        'I let my goodbye finish before I hang up. Try interrupting me now!',
    };
  }
  const fromDocuments = knowledgeReply(message);
  if (fromDocuments) return fromDocuments;
  const words = said.replace(/[\s.!?…]+$/u, '');
  const echo = words.length > 80 ? `${words.slice(0, 77)}...` : words;
  // The echo's length is the caller's: a short first sentence keeps the first words as quick as any answer's.
  return {
    content:
      `I'm the built-in demo model, so my answers are scripted. You said: "${echo}". ` +
      'Ask about opening hours, prices, our address or order 4711, ask for a person, or say goodbye.',
  };
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
