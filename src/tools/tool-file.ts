import { z } from 'zod';
import { JsonPathSchema } from './json-path.js';
import { requestSchema, type Env } from './request-template.js';
import { MAX_DESCRIPTION_CHARS } from './tool-definition.js';
import { compileParameters, isSchemaProblem } from './tool-parameters.js';
import { toolNameProblem } from './tool-names.js';

/**
 * One HTTP tool, `<PROMPTS_DIR>/tools/<name>.yaml`:
 *
 *   name: order_status                 # default: the file name without extension
 *   description: Looks up an order.    # what the model reads to decide when to call it
 *   parameters: { type: object, properties: {…}, required: […] }   # JSON schema of the arguments
 *   request: { method, url, headers?, query?, body? }               # templates: {{argument}}, {{variable}}, ${ENV}
 *   timeout_ms: 3000                   # default TOOL_TIMEOUT_MS
 *   response: { path?: order.status, max_chars?: 1500 }
 *   hold: ["One moment."]              # said while it runs
 *   side_effect: false                 # true: run once per call per arguments, never aborted
 *   errors: { timeout?, failed? }      # wording for the model
 */

export { RESERVED_TOOL_NAMES, TOOL_NAME, toolNameProblem } from './tool-names.js';

// A function, so no two tools share (and could change) one default object.
const noParameters = () => ({ type: 'object' as const, properties: {} });

/**
 * The arguments' JSON schema, kept as written for the model and made into
 * the validator that checks what the model sends. A schema that cannot be
 * checked is refused here, where the file can still be fixed, not at the
 * first call.
 */
const ParametersSchema = z
  .looseObject({
    type: z.literal('object', { error: 'the arguments are an object: write type: object' }),
    properties: z.record(z.string(), z.unknown()).optional(),
  })
  .prefault(noParameters)
  .transform((schema, ctx) => {
    const compiled = compileParameters(schema);
    if (!isSchemaProblem(compiled)) return compiled;
    ctx.addIssue({ code: 'custom', path: [...compiled.path], message: compiled.message });
    return { schema: schema as Record<string, unknown>, validator: z.never(), names: [] };
  });

const text = z.string().trim().min(1);

/** The schema for one reading of a tool file; `env` fills its `${…}`. */
export function toolFileSchema(env: Env) {
  return z.strictObject({
    name: z
      .string()
      .superRefine((name, ctx) => {
        const problem = toolNameProblem(name);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    description: z
      .string()
      .trim()
      .min(1, 'say what the tool does: the model reads it to decide when to call it')
      .max(MAX_DESCRIPTION_CHARS, `at most ${MAX_DESCRIPTION_CHARS} characters: the model's provider refuses a longer one (put the rest in system.md)`),
    parameters: ParametersSchema,
    request: requestSchema(env),
    timeout_ms: z.number().int().min(100).max(60_000).optional(),
    response: z
      .strictObject({
        path: JsonPathSchema.optional(),
        max_chars: z.number().int().min(100).max(100_000).optional(),
      })
      .default({}),
    hold: z.array(text).default([]),
    side_effect: z.boolean().default(false),
    errors: z.strictObject({ timeout: text.optional(), failed: text.optional() }).default({}),
  });
}

export type ToolFile = z.output<ReturnType<typeof toolFileSchema>>;
