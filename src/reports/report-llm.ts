/**
 * One report's request to the model: the summary and the structured fields,
 * as one JSON object, from one non-streaming Chat Completions request. An
 * answer that does not fit is sent back once with what was wrong; after that
 * the fields are given up — the report is made without them.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { z } from 'zod';
import { AbortScope } from '../abort-scope.js';
import { shortErrorMessage } from '../llm/llm-errors.js';
import { describeNetworkError } from '../net-errors.js';
import type { FieldValues } from '../store/report-repository.js';
import { parseJsonAnswer } from './json-answer.js';
import { describeField, REPORT_SCHEMA_NAME, reportAnswerSchema, reportJsonSchema, type ReportAnswer } from './report-fields.js';
import type { ReportPrompt } from './report-prompt.js';

export interface ReportLlmOptions {
  /** Self-hosted endpoints need no key. */
  readonly apiKey: string | undefined;
  readonly baseURL: string | undefined;
  readonly model: string;
  /** The longest one request may take; default 30 s. */
  readonly timeoutMs?: number;
}

export type FieldsOutcome =
  | { readonly status: 'ok'; readonly summary: string; readonly fields: FieldValues }
  | { readonly status: 'failed'; readonly error: string };

/** For a report.md with fields and no instruction of its own. */
const DEFAULT_INSTRUCTION = 'Summarise the call in two or three sentences.';
const TRANSCRIPT_FOLLOWS =
  "The transcript of a phone call between a caller and the business's phone agent follows in the next message. " +
  'Answer with one JSON object and nothing else: "summary", the summary the instructions ask for';

export const DEFAULT_REPORT_TIMEOUT_MS = 30_000;

export class ReportLlm {
  private readonly client: OpenAI;
  private readonly model: string;
  private readonly timeoutMs: number;

  constructor(options: ReportLlmOptions) {
    this.client = new OpenAI({
      // Self-hosted endpoints (Ollama, vLLM) need no key, but the SDK insists on one.
      apiKey: options.apiKey ?? 'not-needed',
      baseURL: options.baseURL ?? null,
      // One retry is ours, and only for an answer that does not fit; a failing model fails the fields.
      maxRetries: 0,
    });
    this.model = options.model;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_REPORT_TIMEOUT_MS;
  }

  /** The summary and fields of `transcript`; never rejects. `signal` gives up (shutdown): failed with its reason. */
  async fill(prompt: ReportPrompt, transcript: string, signal: AbortSignal): Promise<FieldsOutcome> {
    const schema = reportAnswerSchema(prompt.fields);
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: systemText(prompt) },
      { role: 'user', content: transcript },
    ];
    let problem = '';
    for (let attempt = 1; attempt <= 2; attempt++) {
      let content: string;
      const scope = new AbortScope([signal], this.timeoutMs);
      try {
        content = await this.ask(prompt, messages, scope.signal);
      } catch (error) {
        return { status: 'failed', error: this.describe(error, signal, scope) };
      } finally {
        scope.dispose();
      }
      const checked = check(content, schema);
      if ('answer' in checked) return { status: 'ok', ...checked.answer };
      problem = checked.problem;
      messages.push(
        { role: 'assistant', content },
        { role: 'user', content: `That answer does not fit: ${problem}. Answer again with only the JSON object.` },
      );
    }
    return { status: 'failed', error: `the model's answer did not fit twice: ${problem}` };
  }

  private async ask(prompt: ReportPrompt, messages: ChatCompletionMessageParam[], signal: AbortSignal): Promise<string> {
    const completion = await this.client.chat.completions.create(
      {
        model: this.model,
        messages,
        stream: false,
        temperature: 0,
        response_format: {
          type: 'json_schema',
          json_schema: { name: REPORT_SCHEMA_NAME, strict: true, schema: reportJsonSchema(prompt.fields) },
        },
      },
      { signal },
    );
    const message = completion.choices[0]?.message;
    if (message?.refusal) throw new Error(`the model refused: ${message.refusal}`);
    return message?.content ?? '';
  }

  /** Why a request failed; an abort is told by whose signal it was (the body may be cut after the SDK let go of it). */
  private describe(error: unknown, signal: AbortSignal, scope: AbortScope): string {
    if (signal.aborted) return reasonOf(signal);
    if (scope.timedOut) return `the model did not answer within ${this.timeoutMs} ms`;
    if (error instanceof OpenAI.APIError && error.status !== undefined) return `the model answered ${error.status}: ${shortErrorMessage(error)}`;
    return describeNetworkError(error);
  }
}

function systemText(prompt: ReportPrompt): string {
  const fields = prompt.fields.map((field) => {
    const about = field.description === undefined ? '' : `: ${field.description}`;
    return `- ${field.name} (${describeField(field)})${about}`;
  });
  if (fields.length === 0) return `${prompt.instruction || DEFAULT_INSTRUCTION}\n\n${TRANSCRIPT_FOLLOWS}.`;
  return [prompt.instruction || DEFAULT_INSTRUCTION, '', `${TRANSCRIPT_FOLLOWS}, and one key for each field:`, ...fields].join('\n');
}

function check(content: string, schema: z.ZodType<ReportAnswer>): { answer: ReportAnswer } | { problem: string } {
  const json = parseJsonAnswer(content);
  if (json === undefined) return { problem: 'it is not a JSON object' };
  const parsed = schema.safeParse(json);
  if (parsed.success) return { answer: parsed.data };
  const issues = parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || 'the object'}: ${issue.message}`);
  return { problem: issues.join('; ') };
}

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : 'aborted';
}
