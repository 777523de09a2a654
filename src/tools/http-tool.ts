import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { z } from 'zod';
import type { BusinessTool, ToolResult, ToolRunContext } from '../call/ports/business-tools.js';
import { formatPath } from '../yaml-file.js';
import { answerValue, sendRequest, type HttpAnswer } from './http-call.js';
import { pathParts, pick } from './json-path.js';
import { renderRequest, type RenderedRequest } from './request-template.js';
import { capResult, resultText } from './result-text.js';
import type { ToolFile } from './tool-file.js';

export interface ToolDefaults {
  /** TOOL_TIMEOUT_MS: for a file without timeout_ms. */
  readonly timeoutMs: number;
  /** TOOL_RESULT_MAX_CHARS: for a file without response.max_chars. */
  readonly maxChars: number;
}

/** How much of a failed answer's body the model reads: it often says why ("slot taken"). */
const ERROR_EXCERPT_CHARS = 300;
const ABORTED: ToolResult = { content: 'not done: the caller interrupted', outcome: 'aborted' };

/** A tool file made runnable. */
export function createHttpTool(name: string, file: ToolFile, defaults: ToolDefaults): BusinessTool {
  const timeoutMs = file.timeout_ms ?? defaults.timeoutMs;
  const maxChars = file.response.max_chars ?? defaults.maxChars;
  const path = file.response.path === undefined ? undefined : pathParts(file.response.path);
  const definition: ChatCompletionTool = {
    type: 'function',
    function: { name, description: file.description, parameters: file.parameters.schema },
  };
  const { method } = file.request;

  const timeoutText = (): string => `error: ${file.errors.timeout ?? `${name} did not answer within ${timeoutMs / 1000} s`}`;
  const failedText = (detail: string): string => `error: ${file.errors.failed ?? detail}`;

  function answered(answer: HttpAnswer, log: ToolRunContext['log'], ms: number): ToolResult {
    log.info({ tool: name, method, status: answer.status, ms, cut: answer.cut || undefined }, 'tool answered');
    const parsed = answerValue(answer);
    if (!answer.ok) {
      const body = parsed.json ? resultText(parsed.value) : parsed.text;
      const excerpt = capResult(body.replace(/\s+/g, ' ').trim(), ERROR_EXCERPT_CHARS);
      const reason = failedText(`${name} answered HTTP ${answer.status}`);
      return { content: excerpt === '' ? reason : `${reason} (the answer: ${excerpt})`, outcome: 'error' };
    }
    if (!parsed.json) {
      // An empty 2xx (a 204) is a success the model must be able to read as one.
      return { content: capResult(parsed.text === '' ? 'done (the answer was empty)' : parsed.text, maxChars), outcome: 'ok' };
    }
    const value = path === undefined ? parsed.value : pick(parsed.value, path);
    if (value === undefined) {
      log.warn({ tool: name, path: file.response.path }, 'tool answer has nothing at response.path');
      return { content: failedText(`${name} answered without ${file.response.path}`), outcome: 'error' };
    }
    return { content: capResult(resultText(value), maxChars), outcome: 'ok' };
  }

  async function send(request: RenderedRequest, context: ToolRunContext): Promise<ToolResult> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const started = performance.now();
    const ms = (): number => Math.round(performance.now() - started);
    try {
      const answer = await sendRequest(request, AbortSignal.any([context.signal, timeout]));
      return answered(answer, context.log, ms());
    } catch (error) {
      // Which signal fired says why; the error itself only says "aborted".
      if (context.signal.aborted) {
        context.log.info({ tool: name, method, ms: ms() }, 'tool run aborted');
        return ABORTED;
      }
      if (timeout.aborted) {
        context.log.warn({ tool: name, method, ms: ms(), timeoutMs }, 'tool timed out');
        return { content: timeoutText(), outcome: 'timeout' };
      }
      // The message only: a fetch error's cause can name the URL, and the URL can hold a secret.
      context.log.warn({ tool: name, method, ms: ms(), reason: networkReason(error) }, 'tool could not be reached');
      return { content: failedText(`${name} could not be reached`), outcome: 'error' };
    }
  }

  return Object.freeze({
    name,
    definition,
    sideEffect: file.side_effect,
    holdLines: Object.freeze([...file.hold]),
    async run(argumentsJson: string, context: ToolRunContext): Promise<ToolResult> {
      try {
        if (context.signal.aborted) return ABORTED;
        const args = parseArguments(argumentsJson, file.parameters.validator);
        if ('invalid' in args) return { content: `error: invalid arguments (${args.invalid}); nothing was done`, outcome: 'invalid' };
        const rendered = renderRequest(file.request, declaredOnly(args.value, file.parameters.names), context.variables);
        if ('missing' in rendered) return { content: missingText(rendered.missing, file.parameters.names), outcome: 'invalid' };
        if ('refused' in rendered) {
          return { content: `error: invalid arguments (${rendered.refused}); nothing was done`, outcome: 'invalid' };
        }
        return await send(rendered.request, context);
      } catch (error) {
        // run() never rejects: whatever went wrong here is the tool's failure, not the call's.
        context.log.error({ err: error, tool: name }, 'tool run failed');
        return { content: failedText(`${name} failed`), outcome: 'error' };
      }
    },
  });
}

function parseArguments(json: string, validator: z.ZodType): { value: Record<string, unknown> } | { invalid: string } {
  let data: unknown = {};
  if (json.trim() !== '') {
    try {
      data = JSON.parse(json);
    } catch {
      return { invalid: 'not valid JSON' };
    }
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { invalid: 'not a JSON object' };
  const parsed = validator.safeParse(data, { reportInput: true });
  if (!parsed.success) {
    const issues = parsed.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => `${formatPath([...issue.path, key])}: is no argument of this tool`)
        : [`${formatPath(issue.path) || 'arguments'}: ${isMissing(issue) ? 'missing' : issue.message}`],
    );
    return { invalid: issues.join('; ') };
  }
  const value = parsed.data;
  return { value: typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {} };
}

/**
 * A missing argument the model can supply; a missing call variable (no
 * caller_number on a withheld number) it cannot, and must not be asked to.
 */
function missingText(missing: readonly string[], declared: readonly string[]): string {
  const args = missing.filter((name) => declared.includes(name));
  const variables = missing.filter((name) => !declared.includes(name));
  const parts = [
    ...(args.length > 0 ? [`invalid arguments (${args.map((n) => `${n}: missing`).join('; ')})`] : []),
    ...(variables.length > 0 ? [`this call has no ${variables.join(', ')}`] : []),
  ];
  return `error: ${parts.join('; ')}; nothing was done`;
}

/** "Invalid input: expected string, received undefined" says less than "missing". */
function isMissing(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'invalid_type' && issue.input === undefined;
}

/**
 * Only the arguments the file declares fill placeholders: an extra
 * `caller_number` from the model must not replace the call's own.
 */
function declaredOnly(args: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const declared: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(args, name)) declared[name] = args[name];
  return declared;
}

function networkReason(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
  const code = cause && 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
  return code ?? (error instanceof Error ? error.name : 'unknown');
}
