import type { ChatRequestBody, Script, ScriptedReply } from '../../src/llm/scripted-server.js';

export function lastUserText(request: ChatRequestBody): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role === 'user' && typeof message.content === 'string') return message.content;
  }
  return '';
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
