import { AbortScope } from '../abort-scope.js';
import { z } from 'zod';
import type { CallerContextSource } from '../call/ports/business-tools.js';
import type { Logger } from '../logger.js';
import { isBuiltinName } from '../prompts/builtins.js';
import { digestAnswer } from './answer-thread.js';
import { cap, MAX_VALUE_CHARS, VARIABLE_NAME, type Mapped } from './context-fields.js';
import { sendRequest } from './http-call.js';
import { JsonPathSchema, pathParts } from './json-path.js';
import { renderRequest, requestSchema, type Env } from './request-template.js';
import { scrubbedLength, scrubForCap, type ToolScrubber } from './tool-scrubber.js';

/**
 * `<PROMPTS_DIR>/tools/context.yaml`: the caller's record, looked up as the
 * call starts, becomes template variables for the greeting and the prompt.
 *
 *   request: { method: GET, url: "https://crm.example.com/customers?phone={{caller_number}}" }
 *   timeout_ms: 800          # the longest the greeting waits (default 1000)
 *   path: customer           # the object in the answer whose fields become variables
 *   variables:               # name → dot path in that object; default: every scalar top-level field
 *     customer_name: name
 */

export { MAX_VALUE_CHARS, VARIABLE_NAME } from './context-fields.js';

/** A customer record is small; anything near this is not one. */
const MAX_RECORD_BYTES = 1024 * 1024;

const variableName = z
  .string()
  .regex(VARIABLE_NAME, 'a variable name is letters, digits and _, not starting with a digit')
  // A record must not replace what the call knows for sure: caller_number picks whose data the tools read.
  .refine((name) => !isBuiltinName(name), { message: 'is a built-in variable; the call sets it, the caller context cannot' });

/** The schema for one reading of context.yaml; `env` fills its `${…}`. */
export function contextFileSchema(env: Env) {
  return z.strictObject({
    request: requestSchema(env),
    timeout_ms: z.number().int().min(50).max(5000).default(1000),
    path: JsonPathSchema.optional(),
    variables: z.record(variableName, JsonPathSchema).optional(),
  });
}

export type ContextFile = z.output<ReturnType<typeof contextFileSchema>>;

/** `scrub` takes the lookup's secrets out of the record's values before any prompt reads them. */
export function createCallerContext(file: ContextFile, logger: Logger, scrub: ToolScrubber): CallerContextSource {
  const recordPath = file.path === undefined ? undefined : pathParts(file.path);
  const mapping = file.variables && Object.entries(file.variables).map(([name, p]): Mapped => [name, pathParts(p)]);
  const { method } = file.request;
  const log = logger.child({ component: 'caller-context' });

  return Object.freeze({
    timeoutMs: file.timeout_ms,
    async lookup(variables: Env, signal: AbortSignal): Promise<Record<string, string>> {
      if (signal.aborted) return {};
      const started = performance.now();
      const ms = (): number => Math.round(performance.now() - started);
      const scope = new AbortScope([signal], file.timeout_ms);
      try {
        const rendered = renderRequest(file.request, {}, variables);
        if (!('request' in rendered)) {
          // Usual, not a fault: a call from a withheld number has no caller_number to look up.
          log.debug({ missing: 'missing' in rendered ? rendered.missing : undefined }, 'caller context not looked up');
          return {};
        }
        const answer = await sendRequest(rendered.request, scope.signal, MAX_RECORD_BYTES);
        const where = { ...(recordPath ? { path: recordPath } : {}), ...(mapping ? { mapping } : {}) };
        const limit = scrubbedLength(scrub, MAX_VALUE_CHARS);
        const { fields } = answer.ok ? await digestAnswer({ kind: 'record', body: answer.body, cut: answer.cut, ...where, limit }) : { fields: {} };
        // Scrubbed before they are cut to size, so that no half secret is left at the end.
        for (const [name, value] of Object.entries(fields)) fields[name] = cap(scrubForCap(value, scrub, MAX_VALUE_CHARS, value.length >= limit).text);
        // Field names and counts only: the values are a customer's personal data.
        log.info({ method, status: answer.status, ms: ms(), fields: Object.keys(fields) }, 'caller context looked up');
        return fields;
      } catch (error) {
        const why = signal.aborted ? 'aborted' : scope.timedOut ? 'timeout' : error instanceof Error ? error.name : 'failed';
        log.warn({ method, ms: ms(), why, timeoutMs: file.timeout_ms }, 'caller context lookup failed');
        return {};
      } finally {
        scope.dispose();
      }
    },
  });
}
