/**
 * A conversation scenario file (YAML, snake_case keys): the one source of its
 * types. Objects are strict so that a typo (`barged_in`) is an error, not a
 * silently ignored key.
 *
 *   name, description?, requires?: scripted, timeout_ms? (per step, default 5000)
 *   env?:    Hotline's settings for this scenario, e.g. { TRANSFER_TIMEOUT_SECONDS: 30 }
 *   model?:  [{ when?: text | /regex/ | [...], when_tool_result?: text | /regex/ | [...], times?,
 *              reply: { content, tool_calls, status, hang, … } }]
 *   tools?:  { <name>: { returns?, delay_ms?, outcome?: ok | error | timeout, description?, parameters?,
 *              hold?: [lines], side_effect? } } — stubs of business tools, offered before the tool files'
 *   call?:   { direction: inbound | outbound, from?, to?, variables? (outbound), playback: auto | manual | none, ms_per_char? }
 *   language?: de | tr | … — the language the call's record must end in; an outbound call's request asks for it
 *   steps:   say (barge_in?, wait_for: speak | request?, after_ms?) | dtmf: "4711#" | silence: true
 *            | barge_in: true | "words" (wait_for: speak | request?, after_ms?) | expect | send | end | start
 *            | finish_speech | wait_ms
 *   expect:  speak: true | { contains, matches, equals, ssml, barge_in, tts, vad, user_input_timeout_seconds }
 *            | reply: { equals, min_speaks? } | actions: [speak, barge_in, …]
 *            | transfer: true | { target, target_phone_number, caller_id_name, caller_id_number, timeout }
 *            | hangup: true | no_stale_speech: true | no_action_within_ms — with max_latency_ms?, timeout_ms?
 *            | tool: { name, arguments?: {…part}, times?, heard_while_running?: true | false | { contains, matches, equals } }
 *
 * scenarios/barge-in.yaml shows most of it in use; keypad.yaml, silence.yaml and
 * transfer.yaml the keypad, silence and the production service's fields; tools.yaml
 * a stubbed business tool.
 */
import { z } from 'zod';
import { normaliseTag } from '../language/language-tag.js';
import { ActionSchema, BargeInSchema, VadSchema } from '../protocol/actions.js';
import { parseDtmfKeys } from '../simulator/dtmf.js';
import { toolNameProblem } from '../tools/tool-file.js';
import { flattenIssues } from '../yaml-file.js';
import { HotlineEnvSchema } from './hotline-env.js';
import { languageSettingProblems, LanguageTagSchema } from './language-check.js';
import { expressionOf, patternProblem, textMatcher } from './pattern.js';

export const ms = z.number().int().min(0);
export const positiveMs = z.number().int().positive();

export const whenPattern = z
  .string()
  .min(1)
  .superRefine((text, ctx) => {
    const problem = patternProblem(() => textMatcher(text));
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const regexPattern = z
  .string()
  .min(1)
  .superRefine((text, ctx) => {
    const problem = patternProblem(() => expressionOf(text));
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * An object with exactly one of the given keys, parsed by that key's schema.
 * A plain z.union would report every branch's complaint; this reports the one
 * that applies. `fieldOf` names keys that are also a field of another branch
 * (`barge_in` of a `say`): beside that branch's key they are its field.
 */
function oneOf<const Branches extends Record<string, z.ZodType>>(
  what: string,
  branches: Branches,
  fieldOf: Partial<Record<keyof Branches, keyof Branches>> = {},
) {
  const keys = Object.keys(branches);
  const list = keys.join(', ');
  return z.unknown().transform((value, ctx): z.output<Branches[keyof Branches]> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: `${what} must be a mapping with one of: ${list}` });
      return z.NEVER;
    }
    const given = keys.filter((key) => Object.hasOwn(value, key));
    const present = given.filter((key) => {
      const owner = fieldOf[key];
      return owner === undefined || !given.includes(owner as string);
    });
    if (present.length !== 1) {
      const others = Object.keys(value);
      ctx.addIssue({
        code: 'custom',
        message:
          present.length === 0
            ? `${what} needs one of: ${list}${others.length > 0 ? ` (found ${others.join(', ')})` : ''}`
            : `${what} does one thing, but has ${present.join(' and ')}: split it`,
      });
      return z.NEVER;
    }
    const key = present[0] ?? '';
    const parsed = branches[key]?.safeParse(value);
    if (!parsed) return z.NEVER;
    if (!parsed.success) {
      for (const issue of flattenIssues(parsed.error.issues)) ctx.addIssue({ code: 'custom', ...issue });
      return z.NEVER;
    }
    return parsed.data as z.output<Branches[keyof Branches]>;
  });
}

/**
 * One of `flags` (`true`, or true and false), or a mapping `schema` parses.
 * z.union would answer a wrong field inside the mapping with a bare "Invalid
 * input"; this passes on what the mapping's schema says.
 */
function flagOr<const Flags extends readonly boolean[], S extends z.ZodType>(flags: Flags, schema: S, what: string) {
  return z.unknown().transform((value, ctx): Flags[number] | z.output<S> => {
    if (typeof value === 'boolean' && flags.includes(value)) return value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: `${what} is ${flags.join(', ')} or a mapping` });
      return z.NEVER;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of flattenIssues(parsed.error.issues)) ctx.addIssue({ code: 'custom', ...issue });
    return z.NEVER;
  });
}

// ---------------------------------------------------------------------------------------------
// model: how the scripted LLM answers
// ---------------------------------------------------------------------------------------------

export const ModelReplySchema = z.strictObject({
  content: z.string().optional(),
  tool_calls: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        // A string is sent as written, so a scenario can send broken JSON.
        arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).default({}),
      }),
    )
    .optional(),
  status: z.number().int().min(200).max(599).optional(),
  error_message: z.string().optional(),
  hang: z.boolean().optional(),
  break_after_tokens: z.number().int().min(0).optional(),
  ttft_ms: ms.optional(),
  token_delay_ms: ms.optional(),
});
export type ModelReply = z.output<typeof ModelReplySchema>;

export const whenPatterns = z.union([whenPattern, z.array(whenPattern).min(1)]);

export const ModelRuleSchema = z.strictObject({
  /** Matched against the caller's last words; no `when` (and no `when_tool_result`) is the default rule. */
  when: whenPatterns.optional(),
  /**
   * Matched against the results of the tools the model just called: the rule
   * answers only a request that ends with tool results, one of them matching.
   * Rules are tried in order, so it goes before the rule that calls the tool.
   */
  when_tool_result: whenPatterns.optional(),
  /** The rule applies this many times, then the next matching rule does. */
  times: z.number().int().positive().optional(),
  reply: ModelReplySchema,
});
export type ModelRule = z.output<typeof ModelRuleSchema>;

// ---------------------------------------------------------------------------------------------
// tools: stubs of business tools
// ---------------------------------------------------------------------------------------------

export const ToolStubSchema = z.strictObject({
  /** What the model reads: text as written, any other value as JSON; for an error, why. */
  returns: z.unknown().optional(),
  /** How long the tool takes, whatever its outcome. */
  delay_ms: ms.optional(),
  /** error and timeout reach the model as `error: …`, as a real tool's failure would. */
  outcome: z.enum(['ok', 'error', 'timeout']).default('ok'),
  /** What the model reads to decide when to call it (matters with --live). */
  description: z.string().trim().min(1).optional(),
  /** JSON schema of the arguments; default `{type: object}`, anything goes. */
  parameters: z.looseObject({ type: z.literal('object', { error: 'the arguments are an object: write type: object' }) }).optional(),
  hold: z.array(z.string().trim().min(1)).default([]),
  side_effect: z.boolean().default(false),
});
export type ToolStub = z.output<typeof ToolStubSchema>;

const toolName = z.string().superRefine((name, ctx) => {
  const problem = toolNameProblem(name);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});
export const ToolStubsSchema = z.record(toolName, ToolStubSchema);

// ---------------------------------------------------------------------------------------------
// call: how the fake voice service rings
// ---------------------------------------------------------------------------------------------

export const phoneNumber = z.union([z.string().min(1), z.number().int().nonnegative()]).transform(String);

export const CallSchema = z
  .strictObject({
    direction: z.enum(['inbound', 'outbound']).default('inbound'),
    from: phoneNumber.optional(),
    /** Outbound: the number requested through POST /api/calls, then rung. */
    to: phoneNumber.optional(),
    variables: z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'variable names are letters, digits, _ . -'),
        z.union([z.string(), z.number(), z.boolean()]).transform(String),
      )
      .optional(),
    playback: z.enum(['auto', 'manual', 'none']).default('auto'),
    /** Auto playback: how long each character of a speak takes to play. */
    ms_per_char: z.number().positive().optional(),
  })
  .prefault({});
export type CallSpec = z.output<typeof CallSchema>;

// ---------------------------------------------------------------------------------------------
// steps
// ---------------------------------------------------------------------------------------------

const textMatcherShape = {
  /** Case-insensitive; a list means all of them. */
  contains: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  /** `/body/flags`, or a bare expression (case-sensitive). */
  matches: regexPattern.optional(),
  /** The whole text, exactly (surrounding whitespace aside). */
  equals: z.string().optional(),
};
export const TextMatcherSchema = z.strictObject(textMatcherShape);
export type TextMatcher = z.output<typeof TextMatcherSchema>;

/** The voice a speak asks for, in part: only the fields given are compared. */
const TtsMatcherSchema = z.strictObject({
  provider: z.enum(['azure', 'eleven_labs']).optional(),
  /** An ElevenLabs `{name}` voice matches its name. */
  voice: z.string().min(1).optional(),
  language: z.string().min(1).optional(),
});

/**
 * What a speak says — contains / matches / equals look at the words, so an SSML
 * speak is matched without its markup — and, in part, the options it carries.
 */
export const SpeakMatcherSchema = z.strictObject({
  ...textMatcherShape,
  /** true: the speak is SSML; false: plain text; a matcher: its SSML, markup and all. */
  ssml: flagOr([true, false], TextMatcherSchema, 'ssml').optional(),
  barge_in: BargeInSchema.partial().optional(),
  tts: TtsMatcherSchema.optional(),
  vad: VadSchema.partial().optional(),
  user_input_timeout_seconds: z.number().positive().optional(),
});
export type SpeakMatcher = z.output<typeof SpeakMatcherSchema>;

/** Every action type the voice service knows, from the schema Hotline sends with. */
const ACTION_TYPES = ActionSchema.options.map((option) => option.shape.type.value);
const actionType = z.enum(ACTION_TYPES, { error: `an action type is one of: ${ACTION_TYPES.join(', ')}` });

export const TransferMatcherSchema = z.strictObject({
  target: phoneNumber.optional(),
  target_phone_number: phoneNumber.optional(),
  caller_id_name: z.string().min(1).optional(),
  caller_id_number: phoneNumber.optional(),
  /** The ring timeout, in seconds. */
  timeout: z.number().int().positive().optional(),
});
export type TransferMatcher = z.output<typeof TransferMatcherSchema>;

const latency = { max_latency_ms: positiveMs.optional(), timeout_ms: positiveMs.optional() };

/** Calls of a stubbed tool: with these arguments (in part), this often so far, and what the caller heard meanwhile. */
export const ToolCallMatcherSchema = z
  .strictObject({
    name: z.string().min(1),
    /** Only the fields given are compared; nested mappings in part too, lists whole. */
    arguments: z.record(z.string(), z.unknown()).optional(),
    /** Exactly this many matching calls so far; without it, at least one. */
    times: z.number().int().min(0).optional(),
    /** A speak (true: any; false: none) that arrived while the matching call ran. */
    heard_while_running: flagOr([true, false], TextMatcherSchema, 'heard_while_running').optional(),
  })
  .superRefine((matcher, ctx) => {
    if (matcher.times === 0 && matcher.heard_while_running !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['heard_while_running'], message: 'nothing is heard while a tool runs that is not called (times: 0)' });
    }
  });
export type ToolCallMatcher = z.output<typeof ToolCallMatcherSchema>;

/** Keys are text: YAML reads 0815 as the number 815, which is not what was typed. */
const dtmfKeys = z
  .string({
    error: (issue) =>
      typeof issue.input === 'number' ? 'keys are text: quote them, e.g. dtmf: "0815#" (a bare number loses leading zeros)' : undefined,
  })
  .transform((raw, ctx) => {
    const parsed = parseDtmfKeys(raw);
    if (parsed.ok) return parsed.keys;
    ctx.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  });

export const ExpectationSchema = oneOf('an expectation', {
  speak: z.strictObject({ speak: flagOr([true], SpeakMatcherSchema, 'speak'), ...latency }),
  reply: z.strictObject({
    reply: z.strictObject({ equals: z.string().min(1), min_speaks: z.number().int().positive().optional() }),
    ...latency,
  }),
  /** The next actions, one after another with nothing between them, are of these types. */
  actions: z.strictObject({ actions: z.array(actionType).min(1), ...latency }),
  transfer: z.strictObject({
    transfer: flagOr([true], TransferMatcherSchema, 'transfer'),
    ...latency,
  }),
  hangup: z.strictObject({ hangup: z.literal(true), ...latency }),
  no_stale_speech: z.strictObject({ no_stale_speech: z.literal(true), timeout_ms: positiveMs.optional() }),
  no_action_within_ms: z.strictObject({ no_action_within_ms: positiveMs }),
  tool: z.strictObject({ tool: ToolCallMatcherSchema, timeout_ms: positiveMs.optional() }),
});
export type Expectation = z.output<typeof ExpectationSchema>;

const waitFor = z.enum(['speak', 'request'], { error: 'wait_for is speak or request' }).optional();

export const StepSchema = oneOf('a step', {
  say: z.strictObject({
    say: z.string(),
    barge_in: z
      .boolean({ error: 'barge_in of a say is true or false (user_barge_in with words is a step of its own: - barge_in: "words")' })
      .optional(),
    /** Wait for the next speak first (and take it), to barge in on a reply that has begun; or for the model to be asked. */
    wait_for: waitFor,
    after_ms: ms.optional(),
  }),
  expect: z.strictObject({ expect: ExpectationSchema }),
  /** Keys pressed on the keypad, one dtmf_received each: `dtmf: "4711#"`. */
  dtmf: z.strictObject({ dtmf: dtmfKeys }),
  /** The caller stays silent: user_input_timeout, once the playback has ended. */
  silence: z.strictObject({ silence: z.literal(true) }),
  /** The older interruption, user_barge_in: `true`, or the caller's words. */
  barge_in: z.strictObject({
    barge_in: z.union([z.literal(true), z.string().min(1)], { error: 'barge_in is true, or the words the caller barges in with' }),
    wait_for: waitFor,
    after_ms: ms.optional(),
  }),
  send: z.strictObject({
    send: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]),
  }),
  end: z.strictObject({ end: z.union([z.literal(true), z.string().min(1)]) }),
  start: z.strictObject({ start: z.literal(true) }),
  finish_speech: z.strictObject({ finish_speech: z.literal(true) }),
  wait_ms: z.strictObject({ wait_ms: ms }),
}, { barge_in: 'say' });
export type Step = z.output<typeof StepSchema>;

// ---------------------------------------------------------------------------------------------
// the file
// ---------------------------------------------------------------------------------------------

export const ScenarioSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a name is letters, digits, _ . - (it is typed on the command line)'),
    description: z.string().optional(),
    /** `scripted`: skipped with --live, because it depends on what the scripted model says. */
    requires: z.literal('scripted').optional(),
    /** Default wait of each step, in place of the runner's. */
    timeout_ms: positiveMs.optional(),
    env: HotlineEnvSchema.optional(),
    model: z.array(ModelRuleSchema).min(1).optional(),
    tools: ToolStubsSchema.optional(),
    call: CallSchema,
    /**
     * The language the call must be in when it ends, as Hotline's record says (a prompts language
     * folder's tag: `de`): checked once the steps have passed. Calls run with LANGUAGES and
     * CONFIGURE_TRANSCRIPTION on; an outbound call's request asks for it (its `language` variable).
     */
    language: LanguageTagSchema.optional(),
    steps: z.array(StepSchema).min(1),
  })
  .superRefine((scenario, ctx) => {
    const { call, steps, model, language } = scenario;
    if (call.variables && call.direction !== 'outbound') {
      ctx.addIssue({ code: 'custom', path: ['call', 'variables'], message: 'variables are for outbound calls (direction: outbound)' });
    }
    if (language !== undefined) {
      for (const { name, message } of languageSettingProblems(scenario.env ?? {})) ctx.addIssue({ code: 'custom', path: ['env', name], message });
      const asked = call.variables?.language;
      if (asked !== undefined && (normaliseTag(asked) ?? asked) !== language) {
        ctx.addIssue({
          code: 'custom',
          path: ['call', 'variables', 'language'],
          message: `the request asks for ${asked}, and language: expects ${language}: language: alone asks the request for it`,
        });
      }
    }
    if (call.ms_per_char !== undefined && call.playback !== 'auto') {
      ctx.addIssue({ code: 'custom', path: ['call', 'ms_per_char'], message: 'ms_per_char is for playback: auto' });
    }
    const defaultRule = model?.findIndex((rule) => rule.when === undefined && rule.when_tool_result === undefined) ?? -1;
    if (model && defaultRule >= 0 && defaultRule < model.length - 1) {
      ctx.addIssue({ code: 'custom', path: ['model', defaultRule], message: 'the default rule (no `when`) must be the last one' });
    }
    let said = false;
    steps.forEach((step, index) => {
      // A user_barge_in is as much an interruption as a say with barge_in.
      if ('say' in step || 'barge_in' in step) said = true;
      if ('finish_speech' in step && call.playback !== 'manual') {
        ctx.addIssue({ code: 'custom', path: ['steps', index, 'finish_speech'], message: 'finish_speech needs call.playback: manual' });
      }
      if ('expect' in step && 'no_stale_speech' in step.expect && !said) {
        ctx.addIssue({ code: 'custom', path: ['steps', index, 'expect'], message: 'no_stale_speech needs an earlier say (the barge-in)' });
      }
      if ('expect' in step && 'tool' in step.expect && !Object.hasOwn(scenario.tools ?? {}, step.expect.tool.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['steps', index, 'expect', 'tool', 'name'],
          message: `${step.expect.tool.name} is not stubbed: only the calls of the tools under \`tools:\` are recorded`,
        });
      }
    });
  });
export type Scenario = z.output<typeof ScenarioSchema>;
