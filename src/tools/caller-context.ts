import { z } from 'zod';
import type { CallerContextSource } from '../call/ports/business-tools.js';
import type { Logger } from '../logger.js';
import { isBuiltinName } from '../prompts/builtins.js';
import { answerValue, sendRequest } from './http-call.js';
import { JsonPathSchema, pathParts, pick } from './json-path.js';
import { renderRequest, requestSchema, type Env } from './request-template.js';
import { resultText } from './result-text.js';

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

export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A prompt reads these; a long CRM note would crowd out the rest of it. */
export const MAX_VALUE_CHARS = 500;
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

export function createCallerContext(file: ContextFile, logger: Logger): CallerContextSource {
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
      const timeout = AbortSignal.timeout(file.timeout_ms);
      try {
        const rendered = renderRequest(file.request, {}, variables);
        if (!('request' in rendered)) {
          // Usual, not a fault: a call from a withheld number has no caller_number to look up.
          log.debug({ missing: 'missing' in rendered ? rendered.missing : undefined }, 'caller context not looked up');
          return {};
        }
        const answer = await sendRequest(rendered.request, AbortSignal.any([signal, timeout]), MAX_RECORD_BYTES);
        const parsed = answerValue(answer);
        const record = parsed.json && answer.ok ? (recordPath === undefined ? parsed.value : pick(parsed.value, recordPath)) : undefined;
        const fields = isRecord(record) ? fieldsOf(record, mapping) : {};
        // Field names and counts only: the values are a customer's personal data.
        log.info({ method, status: answer.status, ms: ms(), fields: Object.keys(fields) }, 'caller context looked up');
        return fields;
      } catch (error) {
        const why = signal.aborted ? 'aborted' : timeout.aborted ? 'timeout' : error instanceof Error ? error.name : 'failed';
        log.warn({ method, ms: ms(), why, timeoutMs: file.timeout_ms }, 'caller context lookup failed');
        return {};
      }
    },
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A variable's name and the path of its field. */
type Mapped = readonly [string, readonly string[]];

function fieldsOf(record: Record<string, unknown>, mapping: readonly Mapped[] | undefined): Record<string, string> {
  const fields: Record<string, string> = {};
  const add = (name: string, value: string | undefined): void => {
    if (value !== undefined && value !== '') fields[name] = value;
  };
  if (mapping !== undefined) {
    // Asked for by name, so an object or a list is given too, as JSON.
    for (const [name, parts] of mapping) {
      const value = pick(record, parts);
      add(name, value === undefined || value === null ? undefined : cap(resultText(value).trim()));
    }
    return fields;
  }
  for (const [name, value] of Object.entries(record)) {
    if (!VARIABLE_NAME.test(name) || isBuiltinName(name)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') add(name, cap(String(value).trim()));
  }
  return fields;
}

/** At most MAX_VALUE_CHARS, never half a surrogate pair, and no mark: the value may be spoken. */
function cap(value: string): string {
  if (value.length <= MAX_VALUE_CHARS) return value;
  let end = MAX_VALUE_CHARS;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return value.slice(0, end).trimEnd();
}
