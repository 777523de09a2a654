import { withoutKnowledgeNote } from '../../src/call/knowledge-note.js';
import type { ChatRequestBody, Script, ScriptedReply } from '../../src/llm/scripted-server.js';

/** The caller's newest words as the request shows them, without the business's documents' note after them. */
export function lastUserText(request: ChatRequestBody): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role === 'user' && typeof message.content === 'string') return withoutKnowledgeNote(message.content);
  }
  return '';
}

/** Everything the caller said, in order, as the request shows it. */
export function userTexts(request: ChatRequestBody): string[] {
  return request.messages.flatMap((m) => (m.role === 'user' && typeof m.content === 'string' ? [m.content] : []));
}

/** A script keyed by the caller's last words; unknown input gets `fallback`. */
export function scriptByUserText(
  replies: Record<string, ScriptedReply | ((request: ChatRequestBody) => ScriptedReply)>,
  fallback: ScriptedReply = { content: 'I did not understand that.' },
): Script {
  return (request) => {
    const reply = replies[lastUserText(request)] ?? fallback;
    return typeof reply === 'function' ? reply(request) : reply;
  };
}
