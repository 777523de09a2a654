/**
 * The built-in scripted model playing an eval offline: the agent and the
 * caller from rules (a scenario's model rules, which may also look at the
 * system prompt and vary from run to run), the judge from pass_if / fail_if
 * patterns on the transcript. Served over HTTP like any model, so an offline
 * eval runs every line of the real one.
 */
import { demoScript } from '../demo/demo-script.js';
import type { ChatRequestBody, Script, ScriptedReply } from '../llm/scripted-server.js';
import { anyOf, lastUserText, toScriptedReply, trailingToolResults } from '../scenarios/model.js';
import { textMatcher } from '../scenarios/pattern.js';
import type { JudgeRule, ScriptedRule } from './eval-schema.js';
import { CRITERION_LABEL, TRANSCRIPT_LABEL, VERDICT_TOOL } from './judge.js';

/** The agent's rules, or the demo model when the eval has none. */
export function scriptedAgent(rules: readonly ScriptedRule[] | undefined, run: number): Script {
  return rules ? ruleScript(rules, run, 'agent') : demoScript;
}

/** The caller's rules: `when` is matched against what the agent said last. */
export function scriptedCaller(rules: readonly ScriptedRule[] | undefined, run: number): Script {
  // Without rules, a caller with nothing to say leaves: an eval of the greeting alone.
  return rules ? ruleScript(rules, run, 'caller') : () => ({ toolCalls: [{ name: 'hang_up', arguments: '{}' }] });
}

function ruleScript(rules: readonly ScriptedRule[], run: number, role: 'agent' | 'caller'): Script {
  const compiled = rules.map((rule) => ({
    rule,
    words: anyOf(rule.when),
    prompt: anyOf(rule.when_prompt),
    results: rule.when_tool_result === undefined ? undefined : anyOf(rule.when_tool_result),
    used: 0,
  }));
  return (request) => {
    const heard = lastUserText(request);
    const system = systemText(request);
    const toolResults = trailingToolResults(request);
    const entry = compiled.find(
      (c) =>
        (c.rule.times === undefined || c.used < c.rule.times) &&
        c.words(heard) &&
        c.prompt(system) &&
        (c.results === undefined || toolResults.some(c.results)),
    );
    if (!entry) {
      // The agent says so aloud, so the transcript shows which words no rule covered; the caller leaves.
      if (role === 'caller') return { toolCalls: [{ name: 'hang_up', arguments: '{}' }] };
      return { content: `No scripted rule matches "${heard}".` };
    }
    entry.used++;
    const { reply, replies } = entry.rule;
    const chosen = replies ? replies[(run - 1) % replies.length] : reply;
    return chosen ? toScriptedReply(chosen) : { content: '' };
  };
}

/** The judge: the first rule whose `criterion` matches grades it; a criterion no rule covers fails, and says so. */
export function scriptedJudge(rules: readonly JudgeRule[]): Script {
  const compiled = rules.map((rule) => ({
    rule,
    criterion: textMatcher(rule.criterion),
    passIf: rule.pass_if === undefined ? undefined : textMatcher(rule.pass_if),
    failIf: rule.fail_if === undefined ? undefined : textMatcher(rule.fail_if),
  }));
  return (request) => {
    const asked = lastUserText(request);
    const criterion = asked.startsWith(CRITERION_LABEL) ? (asked.slice(CRITERION_LABEL.length).split('\n')[0] ?? '') : '';
    const at = asked.indexOf(TRANSCRIPT_LABEL);
    const transcript = at < 0 ? '' : asked.slice(at + TRANSCRIPT_LABEL.length);
    const entry = compiled.find((c) => c.criterion(criterion));
    if (!entry) return verdict(false, `the scripted judge has no rule for "${criterion}": add one under scripted.judge`);
    const { rule, passIf, failIf } = entry;
    if (failIf?.(transcript)) return verdict(false, `the call matches ${rule.fail_if ?? ''}`);
    if (passIf && !passIf(transcript)) return verdict(false, `nothing in the call matches ${rule.pass_if ?? ''}`);
    return verdict(true, passIf ? `the call matches ${rule.pass_if ?? ''}` : `nothing in the call matches ${rule.fail_if ?? ''}`);
  };
}

function verdict(pass: boolean, reason: string): ScriptedReply {
  return { toolCalls: [{ name: VERDICT_TOOL, arguments: JSON.stringify({ pass, reason: `scripted judge: ${reason}` }) }] };
}

function systemText(request: ChatRequestBody): string {
  return request.messages
    .filter((message) => message.role === 'system' || message.role === 'developer')
    .map((message) => (typeof message.content === 'string' ? message.content : message.content.map((part) => part.text).join('')))
    .join('\n');
}
