/**
 * The Chat Completions request as the scripted server checks it: loose zod schemas, and
 * validation that rejects what the real API rejects, with the real API's messages.
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// Request schemas, loosely modelled on the Chat Completions API. Objects are loose because the
// real API accepts many optional fields we do not care about (name, audio, prediction, …).
// ---------------------------------------------------------------------------------------------

/**
 * Anthropic-style prompt cache marks, on text parts and tools, as gateways to Claude and others
 * accept them through this API (OpenRouter, LiteLLM); Hotline sends them with LLM_CACHE_MARKS.
 */
export const CacheControlSchema = z.looseObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });
export const TextPartSchema = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: CacheControlSchema.optional() });
export const RefusalPartSchema = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
export const UserContentPartSchema = z.discriminatedUnion('type', [
  TextPartSchema,
  z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string() }) }),
  z.looseObject({
    type: z.literal('input_audio'),
    input_audio: z.looseObject({ data: z.string(), format: z.string() }),
  }),
  z.looseObject({ type: z.literal('file'), file: z.looseObject({}) }),
]);

const textContent = z.union([z.string(), z.array(TextPartSchema).min(1)]);

export const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

export const SystemMessageSchema = z.looseObject({
  role: z.literal('system'),
  content: textContent,
  name: z.string().optional(),
});
export const DeveloperMessageSchema = z.looseObject({
  role: z.literal('developer'),
  content: textContent,
  name: z.string().optional(),
});
export const UserMessageSchema = z.looseObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(UserContentPartSchema).min(1)]),
  name: z.string().optional(),
});
export const AssistantMessageSchema = z.looseObject({
  role: z.literal('assistant'),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion('type', [TextPartSchema, RefusalPartSchema]))])
    .nullish(),
  refusal: z.string().nullish(),
  tool_calls: z.array(ToolCallSchema).min(1).optional(),
  name: z.string().optional(),
});
export const ToolMessageSchema = z.looseObject({
  role: z.literal('tool'),
  tool_call_id: z.string(),
  content: textContent,
});

export const ChatMessageSchema = z.discriminatedUnion('role', [
  SystemMessageSchema,
  DeveloperMessageSchema,
  UserMessageSchema,
  AssistantMessageSchema,
  ToolMessageSchema,
]);
export type ChatMessage = z.infer<typeof ChatMessageSchema>;
export type ChatToolCall = z.infer<typeof ToolCallSchema>;

export const ChatToolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z
      .string()
      .max(64)
      .regex(/^[a-zA-Z0-9_-]+$/),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
  cache_control: CacheControlSchema.optional(),
});
export type ChatTool = z.infer<typeof ChatToolSchema>;

export const ChatRequestBodySchema = z.looseObject({
  model: z.string(),
  messages: z.array(ChatMessageSchema),
  tools: z.array(ChatToolSchema).min(1).optional(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
});
export type ChatRequestBody = z.infer<typeof ChatRequestBodySchema>;

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

export interface ApiError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export type Validation = { ok: true; body: ChatRequestBody } | { ok: false; error: ApiError };

const JSON_PARSE_MESSAGE =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)";

function invalid(message: string, param: string | null = null, code: string | null = null): Validation {
  return { ok: false, error: { message, type: 'invalid_request_error', param, code } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

function describeExpected(expected: string): string {
  switch (expected) {
    case 'array':
      return 'an array of objects';
    case 'object':
      return 'an object';
    case 'integer':
      return 'an integer';
    default:
      return `a ${expected}`;
  }
}

function listValues(values: readonly unknown[]): string {
  const quoted = values.map((v) => `'${String(v)}'`);
  if (quoted.length <= 1) return quoted.join('');
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted[quoted.length - 1]}`;
}

type Path = readonly PropertyKey[];

function formatParam(path: Path): string {
  let out = '';
  for (const key of path) {
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

function valueAt(root: unknown, path: Path): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Turns the first zod issue into the wording the real API uses for the same mistake. */
function issueToError(issue: z.core.$ZodIssue, root: unknown, base: Path): Validation {
  const path = [...base, ...issue.path];
  const param = formatParam(path);
  const value = valueAt(root, path);
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return invalid(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
      return invalid(
        `Invalid type for '${param}': expected ${describeExpected(issue.expected)}, but got ${describeType(value)} instead.`,
        param,
        'invalid_type',
      );
    case 'invalid_value':
      return invalid(
        `Invalid value: '${String(value)}'. Supported values are: ${listValues(issue.values)}.`,
        param,
        'invalid_value',
      );
    case 'invalid_union': {
      if (issue.errors.length === 0) {
        const options = 'options' in issue && Array.isArray(issue.options) ? issue.options : [];
        const discriminator = valueAt(root, path);
        if (discriminator === undefined) return invalid(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
        return invalid(`Invalid value: '${String(discriminator)}'. Supported values are: ${listValues(options)}.`, param, 'invalid_value');
      }
      // The branch that got past the top-level type check tells what the client meant.
      const deeper = issue.errors.find((branch) => branch.some((i) => i.path.length > 0 || i.code !== 'invalid_type'));
      const first = deeper?.[0];
      if (first) return issueToError(first, root, path);
      if (value === undefined) return invalid(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
      const expected = issue.errors
        .map((branch) => branch[0])
        .map((i) => (i?.code === 'invalid_type' ? describeExpected(i.expected) : 'a valid value'));
      return invalid(
        `Invalid type for '${param}': expected one of ${expected.join(' or ')}, but got ${describeType(value)} instead.`,
        param,
        'invalid_type',
      );
    }
    case 'too_small':
      if (issue.origin === 'array' && Number(issue.minimum) === 1) {
        return invalid(
          `Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
          param,
          'empty_array',
        );
      }
      return invalid(`Invalid '${param}': ${issue.message}.`, param, null);
    case 'too_big':
      if (issue.origin === 'string' && typeof value === 'string') {
        return invalid(
          `Invalid '${param}': string too long. Expected a string with maximum length ${String(issue.maximum)}, but got a string with length ${value.length} instead.`,
          param,
          'string_above_max_length',
        );
      }
      return invalid(`Invalid '${param}': ${issue.message}.`, param, null);
    case 'invalid_format':
      if (issue.format === 'regex' && 'pattern' in issue && typeof issue.pattern === 'string') {
        const pattern = issue.pattern.replace(/^\/|\/[a-z]*$/g, '');
        return invalid(
          `Invalid '${param}': string does not match pattern. Expected a string that matches the pattern '${pattern}'.`,
          param,
          'invalid_value',
        );
      }
      return invalid(`Invalid '${param}': ${issue.message}.`, param, null);
    default:
      return invalid(`Invalid '${param}': ${issue.message}.`, param, null);
  }
}

function firstIssue(error: z.ZodError, root: unknown, base: Path): Validation {
  const issue = error.issues[0];
  return issue ? issueToError(issue, root, base) : invalid(`Invalid '${formatParam(base)}'.`, formatParam(base));
}

const TopLevelSchema = ChatRequestBodySchema.omit({ messages: true });

/** Validates a parsed request body the way the Chat Completions API does, with its error wording. */
export function validateChatRequest(raw: unknown): Validation {
  if (!isRecord(raw)) return invalid(JSON_PARSE_MESSAGE);
  if (raw['model'] === undefined || raw['model'] === null || raw['model'] === '') {
    return invalid('you must provide a model parameter');
  }
  if (typeof raw['model'] !== 'string') {
    return invalid(`Invalid type for 'model': expected a string, but got ${describeType(raw['model'])} instead.`, 'model', 'invalid_type');
  }
  const messages = raw['messages'];
  if (messages === undefined) return invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(messages)) {
    return invalid(`Invalid type for 'messages': expected an array, but got ${describeType(messages)} instead.`, 'messages', 'invalid_type');
  }
  if (messages.length === 0) {
    return invalid(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    );
  }

  // Roles first, so an unknown role is reported as such rather than as a schema mismatch.
  for (const [i, message] of messages.entries()) {
    const param = `messages[${i}]`;
    if (!isRecord(message)) {
      return invalid(`Invalid type for '${param}': expected an object, but got ${describeType(message)} instead.`, param, 'invalid_type');
    }
    const role = message['role'];
    if (role === undefined) return invalid(`Missing required parameter: '${param}.role'.`, `${param}.role`, 'missing_required_parameter');
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
      return invalid(`Invalid value: '${String(role)}'. Supported values are: ${listValues(ROLES)}.`, `${param}.role`, 'invalid_value');
    }
  }

  const topLevel = TopLevelSchema.safeParse(raw);
  if (!topLevel.success) return firstIssue(topLevel.error, raw, []);
  if (raw['stream_options'] != null && raw['stream'] !== true) {
    return invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', null);
  }
  if (raw['tool_choice'] != null && raw['tools'] == null) {
    return invalid("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice', null);
  }

  const parsed: ChatMessage[] = [];
  for (const [i, message] of messages.entries()) {
    const result = ChatMessageSchema.safeParse(message);
    if (!result.success) return firstIssue(result.error, raw, ['messages', i]);
    const m = result.data;
    if (m.role === 'assistant') {
      if (m.content == null && m.tool_calls === undefined) {
        return invalid("Invalid value for 'content': expected a string, got null.", `messages.[${i}].content`, null);
      }
      for (const [j, call] of (m.tool_calls ?? []).entries()) {
        try {
          JSON.parse(call.function.arguments);
        } catch {
          const param = `messages[${i}].tool_calls[${j}].function.arguments`;
          return invalid(`Invalid value for '${param}': the arguments must be a valid JSON string.`, param, 'invalid_value');
        }
      }
    }
    parsed.push(m);
  }

  for (const [i, m] of parsed.entries()) {
    if (m.role === 'tool') {
      let j = i - 1;
      while (j >= 0 && parsed[j]?.role === 'tool') j--;
      const owner = parsed[j];
      const answers = owner?.role === 'assistant' && (owner.tool_calls ?? []).some((call) => call.id === m.tool_call_id);
      if (!answers) {
        // "preceeding" is OpenAI's spelling; kept so messages match what production logs show.
        return invalid(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
          null,
        );
      }
    }
    if (m.role === 'assistant' && m.tool_calls) {
      const answered = new Set<string>();
      for (let k = i + 1; k < parsed.length; k++) {
        const next = parsed[k];
        if (next?.role !== 'tool') break;
        answered.add(next.tool_call_id);
      }
      const missing = m.tool_calls.map((call) => call.id).filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return invalid(
          `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
          `messages.[${i}].role`,
          null,
        );
      }
    }
  }

  return { ok: true, body: { ...topLevel.data, messages: parsed } };
}

/** Parses and validates a raw request body; `model` is what the body named, even when it was rejected. */
export function parseChatRequest(text: string): { raw: unknown; model: string; validation: Validation } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { raw: undefined, model: '', validation: invalid(JSON_PARSE_MESSAGE) };
  }
  const model = isRecord(raw) && typeof raw['model'] === 'string' ? raw['model'] : '';
  return { raw, model, validation: validateChatRequest(raw) };
}
