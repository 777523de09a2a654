import { z } from 'zod';
import { formatPath } from '../yaml-file.js';

/**
 * A tool's arguments schema (JSON Schema, from a tool file or an MCP
 * server's `inputSchema`): checked once, when the tool is read or listed,
 * and made into the validator every call's arguments pass before anything is
 * sent. A schema that cannot be checked is a tool that is not offered: an
 * invalid one would go into every request to the model, and arguments no
 * one checks would reach the business system as the model wrote them.
 */

/** The JSON of one tool's schema, at most: every request of every turn carries it. */
export const MAX_SCHEMA_CHARS = 16_000;

export interface ToolParameters {
  /** As written, for the model. */
  readonly schema: Record<string, unknown>;
  /** Checks the model's arguments. */
  readonly validator: z.ZodType;
  /** The declared arguments' names. */
  readonly names: readonly string[];
}

export interface SchemaProblem {
  /** Where in the schema, e.g. `['properties', 'day']`. */
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

export interface ParametersOptions {
  /**
   * Arguments the schema does not declare are refused unless it says
   * `additionalProperties`: MCP tools, whose arguments go to the server whole.
   * (A tool file's placeholders take only the declared ones.)
   */
  readonly closed?: boolean;
}

export function compileParameters(schema: Record<string, unknown>, options: ParametersOptions = {}): ToolParameters | SchemaProblem {
  const size = JSON.stringify(schema).length;
  if (size > MAX_SCHEMA_CHARS) {
    return { path: [], message: `is ${size} characters of JSON; a tool's schema may have at most ${MAX_SCHEMA_CHARS}` };
  }
  const properties = isObject(schema.properties) ? schema.properties : {};
  const closed = options.closed === true && !Object.hasOwn(schema, 'additionalProperties') ? { ...schema, additionalProperties: false } : schema;
  let validator: z.ZodType;
  try {
    validator = fromJsonSchema(closed);
  } catch (error) {
    // The whole schema failed; converting each property alone points at the one to fix.
    const defs = { $defs: schema.$defs, definitions: schema.definitions };
    const culprit = Object.entries(properties).find(([, property]) => {
      try {
        fromJsonSchema(isObject(property) ? { ...defs, ...property } : property);
        return false;
      } catch {
        return true;
      }
    });
    return { path: culprit ? ['properties', culprit[0]] : [], message: `cannot be used as a JSON schema: ${describe(error)}` };
  }
  // The converter lets through what it does not use (`minimum: "x"`); the model's provider may not.
  const structure = SchemaNode.safeParse(schema);
  if (!structure.success) {
    const issue = structure.error.issues[0];
    const found = issue ? innermost(issue) : { path: [], message: 'unknown problem' };
    return { path: found.path, message: `is no valid JSON schema: ${found.message}` };
  }
  return { schema, validator, names: Object.keys(properties) };
}

export function isSchemaProblem(compiled: ToolParameters | SchemaProblem): compiled is SchemaProblem {
  return 'message' in compiled;
}

/** The problem as one line: `properties.day: cannot be used …`. */
export function describeSchemaProblem(problem: SchemaProblem): string {
  const where = formatPath(problem.path);
  return where ? `${where}: ${problem.message}` : problem.message;
}

/** The model's arguments (JSON text) checked against `validator`: the value, or what is wrong, for the model to correct. */
export function checkArguments(json: string, validator: z.ZodType): { value: Record<string, unknown> } | { invalid: string } {
  let data: unknown = {};
  if (json.trim() !== '') {
    try {
      data = JSON.parse(json);
    } catch {
      return { invalid: 'not valid JSON' };
    }
  }
  if (!isObject(data)) return { invalid: 'not a JSON object' };
  const parsed = validator.safeParse(data, { reportInput: true });
  if (!parsed.success) {
    const issues = parsed.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => `${formatPath([...issue.path, key])}: is no argument of this tool`)
        : [`${formatPath(issue.path) || 'arguments'}: ${isMissing(issue) ? 'missing' : issue.message}`],
    );
    return { invalid: issues.join('; ') };
  }
  const value: unknown = parsed.data;
  return { value: isObject(value) ? value : {} };
}

/** "Invalid input: expected string, received undefined" says less than "missing". */
function isMissing(issue: z.core.$ZodIssue): boolean {
  return issue.code === 'invalid_type' && issue.input === undefined;
}

/**
 * A schema node is `true`, `false` or an object, so a wrong keyword is an
 * "invalid union" at its node: the branch that got furthest says which and why.
 */
function innermost(issue: z.core.$ZodIssue, base: readonly PropertyKey[] = []): SchemaProblem {
  const path = [...base, ...issue.path];
  if (issue.code !== 'invalid_union') return { path, message: issue.message };
  const branches = issue.errors.flatMap((branch) => (branch[0] ? [innermost(branch[0], path)] : []));
  return branches.reduce<SchemaProblem>((best, branch) => (branch.path.length >= best.path.length ? branch : best), { path, message: issue.message });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function fromJsonSchema(schema: unknown): z.ZodType {
  // A registry of its own: the global one would keep every reload's metadata, and refuse an `$id` seen before.
  return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0], { registry: z.registry() });
}

/**
 * The shape of the JSON Schema keywords a tool's schema uses, as far as the
 * converter would let a wrong one pass: a keyword of the wrong type makes the
 * schema invalid (other keywords are the model's business).
 */
const SIMPLE_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'] as const;
const count = z.number().int().nonnegative();
const regex = z.string().refine(
  (pattern) => {
    try {
      new RegExp(pattern, 'u');
      return true;
    } catch {
      return false;
    }
  },
  { message: 'is no valid regular expression' },
);
const SchemaNode: z.ZodType = z.lazy(() =>
  z.union([
    z.boolean(),
    z.looseObject({
      type: z.union([z.enum(SIMPLE_TYPES), z.array(z.enum(SIMPLE_TYPES)).min(1)]).optional(),
      properties: z.record(z.string(), SchemaNode).optional(),
      patternProperties: z.record(z.string(), SchemaNode).optional(),
      additionalProperties: SchemaNode.optional(),
      required: z.array(z.string()).optional(),
      items: z.union([SchemaNode, z.array(SchemaNode)]).optional(),
      prefixItems: z.array(SchemaNode).optional(),
      enum: z.array(z.unknown()).min(1).optional(),
      anyOf: z.array(SchemaNode).min(1).optional(),
      oneOf: z.array(SchemaNode).min(1).optional(),
      allOf: z.array(SchemaNode).min(1).optional(),
      $defs: z.record(z.string(), SchemaNode).optional(),
      definitions: z.record(z.string(), SchemaNode).optional(),
      $ref: z.string().optional(),
      description: z.string().optional(),
      title: z.string().optional(),
      format: z.string().optional(),
      pattern: regex.optional(),
      minimum: z.number().optional(),
      maximum: z.number().optional(),
      exclusiveMinimum: z.union([z.number(), z.boolean()]).optional(),
      exclusiveMaximum: z.union([z.number(), z.boolean()]).optional(),
      multipleOf: z.number().positive().optional(),
      minLength: count.optional(),
      maxLength: count.optional(),
      minItems: count.optional(),
      maxItems: count.optional(),
      minProperties: count.optional(),
      maxProperties: count.optional(),
      uniqueItems: z.boolean().optional(),
    }),
  ]),
);
