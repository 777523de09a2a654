/**
 * A scripted reply turned into what the server writes: the chunks of an OpenAI stream, each with
 * its delay, and the counts a real provider reports. Planned whole before the first write, so the
 * stream, the one JSON answer and a cut connection all tell the same reply.
 */
import type { ChatRequestBody } from './chat-request.js';
import type { RecordedToken, ScriptedReply } from './scripted-contract.js';
import type { PromptCount } from './scripted-prompt-cache.js';
import { randomId } from './scripted-http.js';
import { tokenize } from './tokenize.js';

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

/** The counts as OpenAI reports them; the prompt's, with its cached part, from the server's prompt cache. */
export function usageFor(prompt: PromptCount, completionTokens: number): Usage {
  const { promptTokens, cachedTokens } = prompt;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export interface Step {
  data: string;
  delayMs: number;
  token?: Omit<RecordedToken, 'at'>;
}

export interface Plan {
  steps: Step[];
  completionTokens: number;
  content: string | null;
  toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
}

function sse(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** `prompt` counts the request's prompt, once and only if the counts are sent. */
export function planReply(body: ChatRequestBody, reply: ScriptedReply, ttftMs: number, tokenDelayMs: number, prompt: () => PromptCount): Plan {
  const id = randomId('chatcmpl-', 29);
  const created = Math.floor(Date.now() / 1000);
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): string =>
    sse({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      system_fingerprint: 'fp_hotline',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });

  const steps: Step[] = [{ data: chunk({ role: 'assistant', content: '', refusal: null }), delayMs: 0 }];
  let generated = 0;
  const nextDelay = (): number => (generated++ === 0 ? ttftMs : tokenDelayMs);
  let completionTokens = 0;

  const content = reply.content ?? '';
  for (const text of tokenize(content)) {
    steps.push({ data: chunk({ content: text }), delayMs: nextDelay(), token: { text } });
    completionTokens++;
  }

  const toolCalls: Plan['toolCalls'] = [];
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    const callId = randomId('call_', 24);
    toolCalls.push({ id: callId, type: 'function', function: { name: call.name, arguments: call.arguments } });
    steps.push({
      data: chunk({
        tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
      delayMs: nextDelay(),
    });
    completionTokens += 1 + tokenize(call.name).length;
    for (const text of tokenize(call.arguments)) {
      steps.push({
        data: chunk({ tool_calls: [{ index, function: { arguments: text } }] }),
        delayMs: nextDelay(),
        token: { text, toolCallIndex: index },
      });
      completionTokens++;
    }
  }

  const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  steps.push({ data: chunk({}, finishReason), delayMs: generated === 0 ? ttftMs : 0 });
  if (includeUsage) {
    steps.push({
      data: sse({
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        system_fingerprint: 'fp_hotline',
        choices: [],
        usage: usageFor(prompt(), completionTokens),
      }),
      delayMs: 0,
    });
  }
  steps.push({ data: 'data: [DONE]\n\n', delayMs: 0 });
  return { steps, completionTokens, content: reply.content ?? (toolCalls.length > 0 ? null : ''), toolCalls };
}

/** An SSE body cut into its events, each with the blank line that ends it. */
export function sseEvents(body: string): string[] {
  return body.split(/(?<=\r?\n\r?\n)/u).filter((event) => event.trim() !== '');
}
