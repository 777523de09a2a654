/**
 * The judge: a model grades one criterion at a time against the call as the
 * caller heard it, and says why in a sentence. One criterion per request, so a
 * verdict cannot lean on another, and each reason is about its own criterion.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { EvalModelError, type RoleClient } from './eval-models.js';

export interface Verdict {
  readonly pass: boolean;
  readonly reason: string;
}

export const VERDICT_TOOL = 'verdict';
/** How the request names its parts; the scripted judge reads them back. */
export const CRITERION_LABEL = 'Criterion: ';
export const TRANSCRIPT_LABEL = 'The call, as the caller heard it:';

const VERDICT: ChatCompletionTool = {
  type: 'function',
  function: {
    name: VERDICT_TOOL,
    description: 'Your verdict on the criterion.',
    parameters: {
      type: 'object',
      properties: {
        pass: { type: 'boolean', description: 'true if the call meets the criterion' },
        reason: { type: 'string', description: 'One sentence: why, quoting the call where it helps' },
      },
      required: ['pass', 'reason'],
    },
  },
};

const INSTRUCTIONS = [
  "You grade a business's AI phone agent. You get one criterion and the transcript of one call, as the caller heard it:",
  'a line marked "(the caller cut in)" was cut off there, and what followed was never heard. Judge only what the',
  'transcript shows. Call the verdict tool: pass true if the call meets the criterion, false if it does not, and a',
  'one-sentence reason.',
].join(' ');

export function judgeMessages(criterion: string, transcript: string): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: `${CRITERION_LABEL}${criterion}\n\n${TRANSCRIPT_LABEL}\n${transcript}` },
  ];
}

export class Judge {
  constructor(private readonly client: RoleClient) {}

  async grade(criterion: string, transcript: string, signal?: AbortSignal): Promise<Verdict> {
    const answer = await this.client.ask(
      { messages: judgeMessages(criterion, transcript), tools: [VERDICT], tool_choice: { type: 'function', function: { name: VERDICT_TOOL } } },
      signal,
    );
    const message = answer.choices[0]?.message;
    const call = message?.tool_calls?.find((c) => c.type === 'function' && c.function.name === VERDICT_TOOL);
    const verdict = readVerdict(call?.type === 'function' ? call.function.arguments : (message?.content ?? ''));
    if (!verdict) throw new EvalModelError('judge', `gave no verdict that can be read: ${JSON.stringify((message?.content ?? '').slice(0, 200))}`);
    return verdict;
  }
}

/**
 * The verdict's arguments, or a JSON object in the text, or a text that
 * starts with PASS or FAIL: servers without forced tool calls answer in text.
 */
export function readVerdict(text: string): Verdict | undefined {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (json !== undefined) {
    try {
      const parsed: unknown = JSON.parse(json);
      if (parsed && typeof parsed === 'object' && 'pass' in parsed) {
        const pass = parsed.pass === true || parsed.pass === 'true';
        const reason = 'reason' in parsed && typeof parsed.reason === 'string' ? parsed.reason.trim() : '';
        return { pass, reason: reason || (pass ? 'met' : 'not met') };
      }
    } catch {
      // Read as text below.
    }
  }
  const word = /^\W*(pass|fail)\w*\b[\W_]*(.*)$/is.exec(text.trim());
  if (!word) return undefined;
  const pass = word[1]?.toLowerCase() === 'pass';
  return { pass, reason: word[2]?.trim() || (pass ? 'met' : 'not met') };
}
