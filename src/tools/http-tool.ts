import { AbortScope } from '../abort-scope.js';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { BusinessTool, ToolResult, ToolRunContext } from '../call/ports/business-tools.js';
import { digestAnswer } from './answer-thread.js';
import { sendRequest, type HttpAnswer } from './http-call.js';
import { pathParts } from './json-path.js';
import { renderRequest, staticOrigin, type RenderedRequest } from './request-template.js';
import { capResult } from './result-text.js';
import type { ToolFile } from './tool-file.js';
import { checkArguments } from './tool-parameters.js';
import { scrubbedLength, scrubForCap, type ToolScrubber } from './tool-scrubber.js';

export interface ToolDefaults {
  /** TOOL_TIMEOUT_MS: for a file without timeout_ms. */
  readonly timeoutMs: number;
  /** TOOL_RESULT_MAX_CHARS: for a file without response.max_chars. */
  readonly maxChars: number;
}

/** How much of a failed answer's body the model reads: it often says why ("slot taken"). */
const ERROR_EXCERPT_CHARS = 300;
const ABORTED: ToolResult = { content: 'not done: the caller interrupted', outcome: 'aborted' };

/** What the model is offered of a tool file. */
export function httpToolDefinition(name: string, file: ToolFile): ChatCompletionTool {
  return { type: 'function', function: { name, description: file.description, parameters: file.parameters.schema } };
}

/** A tool file made runnable; `scrub` takes its secrets out of everything it returns; `source` is the file. */
export function createHttpTool(name: string, file: ToolFile, defaults: ToolDefaults, scrub: ToolScrubber, source?: string): BusinessTool {
  const timeoutMs = file.timeout_ms ?? defaults.timeoutMs;
  const maxChars = file.response.max_chars ?? defaults.maxChars;
  const path = file.response.path === undefined ? undefined : pathParts(file.response.path);
  const definition = httpToolDefinition(name, file);
  const origin = staticOrigin(file.request.url);
  const { method } = file.request;

  const timeoutText = (): string => `error: ${file.errors.timeout ?? `${name} did not answer within ${timeoutMs / 1000} s`}`;
  const failedText = (detail: string): string => `error: ${file.errors.failed ?? detail}`;

  async function answered(answer: HttpAnswer, log: ToolRunContext['log'], ms: number): Promise<ToolResult> {
    log.info({ tool: name, method, status: answer.status, ms, cut: answer.cut || undefined }, 'tool answered');
    const { body, cut } = answer;
    if (!answer.ok) {
      const found = await digestAnswer({ kind: 'excerpt', body, cut, limit: scrubbedLength(scrub, ERROR_EXCERPT_CHARS) });
      const scrubbed = scrubForCap(found.text, scrub, ERROR_EXCERPT_CHARS, found.cut);
      const excerpt = capResult(scrubbed.text.trim(), ERROR_EXCERPT_CHARS, scrubbed.more);
      const reason = failedText(`${name} answered HTTP ${answer.status}`);
      return { content: excerpt === '' ? reason : `${reason} (the answer: ${excerpt})`, outcome: 'error' };
    }
    const found = await digestAnswer({ kind: 'result', body, cut, ...(path ? { path } : {}), limit: scrubbedLength(scrub, maxChars) });
    if (!found.found) {
      log.warn({ tool: name, path: file.response.path }, 'tool answer has nothing at response.path');
      return { content: failedText(`${name} answered without ${file.response.path}`), outcome: 'error' };
    }
    // An empty 2xx (a 204) is a success the model must be able to read as one.
    if (!found.json && found.text === '') return { content: 'done (the answer was empty)', outcome: 'ok' };
    const scrubbed = scrubForCap(found.text, scrub, maxChars, found.cut);
    return { content: capResult(scrubbed.text, maxChars, scrubbed.more), outcome: 'ok' };
  }

  async function send(request: RenderedRequest, context: ToolRunContext): Promise<ToolResult> {
    // Not AbortSignal.any: a composite with a listener outlives the request (see AbortScope).
    const scope = new AbortScope([context.signal], timeoutMs);
    const started = performance.now();
    const ms = (): number => Math.round(performance.now() - started);
    let answer: HttpAnswer;
    try {
      answer = await sendRequest(withTraceHeaders(request, context.propagation), scope.signal);
    } catch (error) {
      // Which signal fired says why; the error itself only says "aborted".
      if (context.signal.aborted) {
        context.log.info({ tool: name, method, ms: ms() }, 'tool run aborted');
        return ABORTED;
      }
      if (scope.timedOut) {
        context.log.warn({ tool: name, method, ms: ms(), timeoutMs }, 'tool timed out');
        return { content: timeoutText(), outcome: 'timeout' };
      }
      // The message only: a fetch error's cause can name the URL, and the URL can hold a secret.
      context.log.warn({ tool: name, method, ms: ms(), reason: networkReason(error) }, 'tool could not be reached');
      return { content: failedText(`${name} could not be reached`), outcome: 'error' };
    } finally {
      scope.dispose();
    }
    const result = await answered(answer, context.log, ms());
    // A big answer is digested on another thread; a caller who cut in meanwhile no longer wants it.
    return context.signal.aborted ? ABORTED : result;
  }

  return Object.freeze({
    name,
    ...(source !== undefined ? { source } : {}),
    ...(origin ? { origin } : {}),
    definition,
    sideEffect: file.side_effect,
    holdLines: Object.freeze([...file.hold]),
    async run(argumentsJson: string, context: ToolRunContext): Promise<ToolResult> {
      try {
        if (context.signal.aborted) return ABORTED;
        const args = checkArguments(argumentsJson, file.parameters.validator);
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

/**
 * Only the arguments the file declares fill placeholders: an extra
 * `caller_number` from the model must not replace the call's own.
 */
function declaredOnly(args: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const declared: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(args, name)) declared[name] = args[name];
  return declared;
}

/**
 * The call's trace goes to the business system (W3C Trace Context), so its own spans join the call's.
 * A header the tool file sets itself wins: the business asked for that one.
 */
function withTraceHeaders(request: RenderedRequest, propagation: ToolRunContext['propagation']): RenderedRequest {
  if (!propagation) return request;
  return { ...request, headers: { ...propagation, ...request.headers } };
}

function networkReason(error: unknown): string {
  // Node's own error carries the code (ECONNREFUSED); a fetch's wraps it as its cause.
  const withCode = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = withCode instanceof Error && 'code' in withCode && typeof withCode.code === 'string' ? withCode.code : undefined;
  return code ?? (error instanceof Error ? error.name : 'unknown');
}
