import { z } from 'zod';
import { HANGUP, SPEAK, TRANSFER } from '../call/turn/tools.js';
import { JsonPathSchema } from './json-path.js';
import { requestSchema, type Env } from './request-template.js';

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

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The call's own tools: a business tool by one of these names would shadow it. */
export const RESERVED_TOOL_NAMES: readonly string[] = [SPEAK, TRANSFER, HANGUP];

/** Why `name` cannot name a tool, or undefined if it can. */
export function toolNameProblem(name: string): string | undefined {
  if (!TOOL_NAME.test(name)) return `"${name}" is no tool name: use 1 to 64 letters, digits, _ and -`;
  if (RESERVED_TOOL_NAMES.includes(name.toLowerCase())) {
    return `"${name}" is the name of one of the call's own tools (${RESERVED_TOOL_NAMES.join(', ')})`;
  }
  return undefined;
}

// A function, so no two tools share (and could change) one default object.
const noParameters = () => ({ type: 'object' as const, properties: {} });

/**
 * The arguments' JSON schema, kept as written for the model and converted to
 * a zod schema that checks what the model sends. A schema zod cannot convert
 * is refused here, where the file can still be fixed, not at the first call.
 */
const ParametersSchema = z
  .looseObject({
    type: z.literal('object', { error: 'the arguments are an object: write type: object' }),
    properties: z.record(z.string(), z.unknown()).optional(),
  })
  .prefault(noParameters)
  .transform((schema, ctx) => {
    const validator = convertSchema(schema, ctx);
    return { schema: schema as Record<string, unknown>, validator, names: Object.keys(schema.properties ?? {}) };
  });

type WrittenSchema = Record<string, unknown> & { properties?: Record<string, unknown> | undefined };

function convertSchema(schema: WrittenSchema, ctx: z.RefinementCtx): z.ZodType {
  try {
    return fromJsonSchema(schema);
  } catch (error) {
    // The whole schema failed; converting each property alone points at the one to fix.
    const defs = { $defs: schema.$defs, definitions: schema.definitions };
    const culprit = Object.entries(schema.properties ?? {}).find(([, property]) => {
      try {
        fromJsonSchema(typeof property === 'object' && property !== null ? { ...defs, ...property } : property);
        return false;
      } catch {
        return true;
      }
    });
    ctx.addIssue({
      code: 'custom',
      path: culprit ? ['properties', culprit[0]] : [],
      message: `cannot be used as a JSON schema: ${error instanceof Error ? error.message : String(error)}`,
    });
    return z.never();
  }
}

function fromJsonSchema(schema: unknown): z.ZodType {
  // A registry of its own: the global one would keep every reload's metadata, and refuse an `$id` seen before.
  return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0], { registry: z.registry() });
}

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
    description: z.string().trim().min(1, 'say what the tool does: the model reads it to decide when to call it'),
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
