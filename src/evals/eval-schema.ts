/**
 * An eval file (`<prompts>/evals/*.yaml`): a caller described in plain words,
 * what the agent must do (criteria a judge model grades, and hard checks), the
 * business tools' stubbed answers, and — for the built-in scripted model only —
 * how the scripted agent, caller and judge play it offline.
 */
import { z } from 'zod';
import { HotlineEnvSchema } from '../scenarios/hotline-env.js';
import { languageSettingProblems, LanguageTagSchema } from '../scenarios/language-check.js';
import { ModelReplySchema, phoneNumber, positiveMs, ToolStubsSchema, whenPattern, whenPatterns } from '../scenarios/schema.js';
import { parseDtmfKeys } from '../simulator/dtmf.js';

const keys = z
  .string({ error: (issue) => (typeof issue.input === 'number' ? 'keys are text: quote them, e.g. dtmf: "0815#"' : undefined) })
  .transform((raw, ctx) => {
    const parsed = parseDtmfKeys(raw);
    if (parsed.ok) return parsed.keys;
    ctx.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  });

/** What the caller does on a turn, instead of what the caller model would choose. */
export const CallerMoveSchema = z.union(
  [
    z.strictObject({ say: z.string().trim().min(1) }),
    z.strictObject({ dtmf: keys }),
    z.strictObject({ silence: z.literal(true) }),
    z.strictObject({ hang_up: z.literal(true) }),
  ],
  { error: 'a turn is one of: say: "words", dtmf: "keys", silence: true, hang_up: true' },
);
export type CallerMove = z.output<typeof CallerMoveSchema>;

const turnNumber = z.string().regex(/^[1-9][0-9]*$/, 'a turn is numbered from 1: the caller\'s first words after the greeting are turn 1');

export const InterruptionSchema = z.strictObject({
  /** The agent's answer to the caller's n-th turn (the greeting is no reply). */
  reply: z.number().int().positive(),
  /** How many of its words the caller lets it say. */
  after_words: z.number().int().min(0).default(3),
  /** The words the caller cuts in with; without them the caller model chooses. */
  say: z.string().trim().min(1).optional(),
});
export type Interruption = z.output<typeof InterruptionSchema>;

/** A tool the agent must have called: arguments compared in part, as in scenarios. */
const ToolCheckSchema = z.strictObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  /** Exactly this many matching runs; without it, at least one. */
  times: z.number().int().min(0).optional(),
});
export type ToolCheck = z.output<typeof ToolCheckSchema>;

export const ChecksSchema = z
  .strictObject({
    tools: z.array(ToolCheckSchema).optional(),
    /** Tools that must not have run at all. */
    no_tools: z.array(z.string().min(1)).optional(),
    /** The agent handed the call to a person (true), or did not (false). */
    transferred: z.boolean().optional(),
    /** The agent ended the call itself (true), or did not (false). */
    hung_up: z.boolean().optional(),
    /** The call was over within this many caller turns. */
    max_turns: z.number().int().positive().optional(),
    /** Every answer's first words came within this many ms of the caller's (the greeting too). */
    first_speak_ms: positiveMs.optional(),
  })
  .prefault({});
export type Checks = z.output<typeof ChecksSchema>;

/** A scripted rule: a scenario's model rule that may also look at the system prompt, and vary from run to run. */
export const ScriptedRuleSchema = z
  .strictObject({
    when: whenPatterns.optional(),
    when_tool_result: whenPatterns.optional(),
    /** Matched against the system prompt: the scripted agent then answers differently to an edited system.md. */
    when_prompt: whenPatterns.optional(),
    times: z.number().int().positive().optional(),
    reply: ModelReplySchema.optional(),
    /** Run k uses the ((k-1) mod n)-th: a model's answers vary from run to run, and so do these. */
    replies: z.array(ModelReplySchema).min(1).optional(),
  })
  .superRefine((rule, ctx) => {
    if ((rule.reply === undefined) === (rule.replies === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a rule has reply or replies (one of them)' });
    }
  });
export type ScriptedRule = z.output<typeof ScriptedRuleSchema>;

export const JudgeRuleSchema = z
  .strictObject({
    /** Matched against the criterion's words. */
    criterion: whenPattern,
    /** Matched against the transcript as the judge reads it ("Agent: …", "Caller: …" lines). */
    pass_if: whenPattern.optional(),
    fail_if: whenPattern.optional(),
  })
  .refine((rule) => rule.pass_if !== undefined || rule.fail_if !== undefined, { message: 'a judge rule has pass_if or fail_if' });
export type JudgeRule = z.output<typeof JudgeRuleSchema>;

export const EvalSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a name is letters, digits, _ . - (it is typed on the command line)'),
    description: z.string().optional(),
    caller: z.strictObject({
      /** Who the caller is and what they want, in plain words, to the caller model. */
      persona: z.string().trim().min(1),
      /** The caller's first words, as written (turn 1). */
      opening: z.string().trim().min(1).optional(),
      /** The caller's number (from_phone_number). */
      from: phoneNumber.default('4915111111111'),
      /** The caller gives up (hangs up) after this many turns. */
      max_turns: z.number().int().positive().max(50).default(10),
    }),
    /**
     * The caller's language (`de`, `ar`): the call runs with a language per call (LANGUAGES and
     * CONFIGURE_TRANSCRIPTION on), a check fails the eval unless Hotline's record of the call says
     * this language at its end, and a caller model is told to speak it.
     */
    language: LanguageTagSchema.optional(),
    /** Fixed moves by turn number, over the caller model's: keypad input, silence, set words. */
    turns: z.record(turnNumber, CallerMoveSchema).default({}),
    interruptions: z.array(InterruptionSchema).default([]),
    tools: ToolStubsSchema.default({}),
    env: HotlineEnvSchema.default({}),
    criteria: z.array(z.string().trim().min(1)).default([]),
    checks: ChecksSchema,
    /** Below this pass rate a criterion or check fails the eval (default: the runner's --min-pass-rate). */
    min_pass_rate: z.number().min(0).max(1).optional(),
    /** How the built-in scripted model plays this eval offline; ignored against a real model. */
    scripted: z
      .strictObject({
        /** The agent's rules; without them the built-in demo model answers. */
        agent: z.array(ScriptedRuleSchema).min(1).optional(),
        caller: z.array(ScriptedRuleSchema).min(1).optional(),
        judge: z.array(JudgeRuleSchema).default([]),
      })
      .prefault({}),
  })
  .superRefine((evaluation, ctx) => {
    const { criteria, checks } = evaluation;
    const hasChecks = Object.values(checks).some((value) => value !== undefined) || evaluation.language !== undefined;
    if (criteria.length === 0 && !hasChecks) {
      ctx.addIssue({ code: 'custom', path: ['criteria'], message: 'an eval needs criteria or checks: what must the agent do?' });
    }
    const seen = new Set<string>();
    criteria.forEach((criterion, index) => {
      if (seen.has(criterion)) ctx.addIssue({ code: 'custom', path: ['criteria', index], message: 'this criterion is written twice' });
      seen.add(criterion);
    });
    if (evaluation.language !== undefined) {
      for (const { name, message } of languageSettingProblems(evaluation.env)) ctx.addIssue({ code: 'custom', path: ['env', name], message });
    }
    for (const [turn, move] of Object.entries(evaluation.turns)) {
      if (Number(turn) > evaluation.caller.max_turns) {
        ctx.addIssue({ code: 'custom', path: ['turns', turn], message: `turn ${turn} comes after caller.max_turns (${evaluation.caller.max_turns})` });
      }
      if (turn === '1' && evaluation.caller.opening !== undefined && 'say' in move) {
        ctx.addIssue({ code: 'custom', path: ['turns', turn], message: 'turn 1 is caller.opening already' });
      }
    }
  });
export type Eval = z.output<typeof EvalSchema>;
