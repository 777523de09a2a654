/**
 * The judge: a model grades one criterion at a time against the call as the
 * caller heard it, and says why in a sentence. One criterion per request, so a
 * verdict cannot lean on another, and each reason is about its own criterion.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { EvalModelError, type RoleClient } from './eval-models.js';
import { readVerdict, type Verdict } from './verdict-text.js';

export type { Verdict } from './verdict-text.js';

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
  'one-sentence reason. If you cannot call tools, answer with that JSON object alone: {"pass": true or false, "reason": "…"}.',
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
    // Unclear is not graded: a verdict guessed from prose would pass what the judge failed.
    if (!verdict) throw new EvalModelError('judge', `gave no verdict that can be read: ${JSON.stringify((message?.content ?? '').slice(0, 200))}`);
    return verdict;
  }
}
