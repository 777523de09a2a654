import OpenAI, { APIError } from 'openai';
import { z } from 'zod';
import { AbortScope } from '../abort-scope.js';
import { shortErrorMessage } from '../llm/llm-errors.js';
import type { Logger } from '../logger.js';

/** The LLM that judges first words the phrases are unsure of. */
export interface JudgeLlmOptions {
  /** Self-hosted endpoints need none. */
  readonly apiKey: string | undefined;
  readonly baseURL: string | undefined;
  readonly model: string;
  /** How long the model may take; default 2000 ms. A person waiting in silence hangs up soon. */
  readonly timeoutMs?: number | undefined;
}

export type Judgement = 'voicemail' | 'human';
export type Judge = (text: string, signal: AbortSignal) => Promise<Judgement>;

export const DEFAULT_JUDGE_TIMEOUT_MS = 2000;

const SYSTEM_PROMPT = [
  'You hear the first words after an outbound phone call was answered, as a speech recogniser wrote them down.',
  'Decide who answered: a person ("human"), or a mailbox, answering machine or carrier announcement ("voicemail").',
  'A person usually says a short greeting, their name, or asks who is calling.',
  'A mailbox plays a recorded greeting: someone cannot take the call, leave a message, a tone or beep.',
  'If you cannot tell, answer "human".',
  'Answer with JSON only: {"answered_by": "voicemail"} or {"answered_by": "human"}.',
].join(' ');

const ANSWER_SCHEMA = {
  type: 'object',
  properties: { answered_by: { type: 'string', enum: ['voicemail', 'human'] } },
  required: ['answered_by'],
  additionalProperties: false,
} as const;

const AnswerSchema = z.object({ answered_by: z.enum(['voicemail', 'human']) });

/**
 * One non-streaming request per unsure call. Every failure (timeout, error
 * status, an answer that says neither) resolves 'human': taking a person for
 * a machine would hang up on them, while the other mistake is only a short
 * conversation with a recording.
 */
export function createJudge(options: JudgeLlmOptions, logger: Logger): Judge {
  const timeoutMs = options.timeoutMs ?? DEFAULT_JUDGE_TIMEOUT_MS;
  const client = new OpenAI({
    // As in llm.ts: self-hosted endpoints need no key, and null keeps the SDK from reading the environment.
    apiKey: options.apiKey ?? 'not-needed',
    baseURL: options.baseURL ?? null,
    // A retry would not fit into the time limit.
    maxRetries: 0,
  });
  const log = logger.child({ component: 'voicemail-judge' });

  return async function judgeFirstWords(text: string, signal: AbortSignal): Promise<Judgement> {
    // Not AbortSignal.any: the SDK's listener would keep the request for good (see AbortScope).
    const scope = new AbortScope([signal], timeoutMs);
    const startedAt = performance.now();
    try {
      const completion = await client.chat.completions.create(
        {
          model: options.model,
          temperature: 0,
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: text },
          ],
          response_format: { type: 'json_schema', json_schema: { name: 'answered_by', strict: true, schema: ANSWER_SCHEMA } },
        },
        { signal: scope.signal },
      );
      const content = completion.choices[0]?.message.content;
      const judgement = parseJudgement(content);
      const ms = Math.round(performance.now() - startedAt);
      if (judgement === undefined) {
        // The reply is the model's, not the caller's: safe to log, cut short.
        log.warn({ reply: (content ?? '').slice(0, 200), ms }, 'the voicemail judge answered neither voicemail nor human; taken as a person');
        return 'human';
      }
      log.debug({ judgement, ms, words: text }, 'voicemail judge answered');
      return judgement;
    } catch (error) {
      const ms = Math.round(performance.now() - startedAt);
      if (signal.aborted) log.debug({ ms }, 'voicemail judge no longer needed');
      else if (scope.timedOut) log.warn({ timeoutMs }, 'the voicemail judge did not answer in time; taken as a person');
      else log.warn({ ms, ...describeFailure(error) }, 'the voicemail judge failed; taken as a person');
      return 'human';
    } finally {
      scope.dispose();
    }
  };
}

/**
 * The model's verdict from its reply: the JSON asked for, the same inside a
 * code fence or after reasoning, or a bare "voicemail" / "human" from a server
 * that ignored the response format. Undefined when it says neither, or both.
 */
export function parseJudgement(content: string | null | undefined): Judgement | undefined {
  if (!content) return undefined;
  const reply = content.replace(/<think(?:ing)?>[\s\S]*?<\/think(?:ing)?>/gi, '').trim();
  const json = /\{[\s\S]*\}/.exec(reply)?.[0];
  if (json !== undefined) {
    try {
      const parsed = AnswerSchema.safeParse(JSON.parse(json));
      if (parsed.success) return parsed.data.answered_by;
    } catch {
      // Not JSON after all: the words may still say it.
    }
  }
  const words = reply.toLowerCase();
  const voicemail = /\b(voicemail|voice mail|mailbox|answering machine)\b/.test(words);
  const human = /\b(human|person)\b/.test(words);
  if (voicemail === human) return undefined;
  return voicemail ? 'voicemail' : 'human';
}

/** What went wrong, fit to log: the status and the server's message, never the request (it carries the key). */
function describeFailure(error: unknown): { status?: number; error: string } {
  if (error instanceof APIError && typeof error.status === 'number') return { status: error.status, error: shortErrorMessage(error) };
  return { error: shortErrorMessage(error) };
}
