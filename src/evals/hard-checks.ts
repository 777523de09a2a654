/**
 * The checks of an eval no judge is needed for: what Hotline's own record of
 * the call says (tools run, how it ended) and what the caller measured (turns,
 * first-speak latency). Each is named as the reports show it.
 */
import type { CallSummary } from '../call/ports/call-summary.js';
import { describeLanguage, languageProblem, recordedLanguage } from '../scenarios/language-check.js';
import { argumentsMatch } from '../scenarios/tool-expectation.js';
import type { Checks, ToolCheck } from './eval-schema.js';

export interface CheckResult {
  readonly name: string;
  readonly pass: boolean;
  /** What was found, said either way. */
  readonly detail: string;
}

export interface CheckedCall {
  readonly record: CallSummary;
  readonly turns: number;
  readonly firstSpeakMs: readonly number[];
}

/** `language`: the eval's, the language the call must be in at its end. */
export function runChecks(checks: Checks, call: CheckedCall, language?: string): CheckResult[] {
  const { record } = call;
  const results: CheckResult[] = [];
  const ran = record.toolRuns.map((run) => `${run.name}(${run.arguments})`);
  const ranText = ran.length === 0 ? 'no tool ran' : `ran ${ran.join(', ')}`;
  for (const wanted of checks.tools ?? []) {
    const matching = record.toolRuns.filter((run) => run.name === wanted.name && argumentsMatch(parsed(run.arguments), wanted.arguments));
    const pass = wanted.times === undefined ? matching.length > 0 : matching.length === wanted.times;
    results.push({ name: toolCheckName(wanted), pass, detail: ranText });
  }
  for (const name of checks.no_tools ?? []) {
    const runs = record.toolRuns.filter((run) => run.name === name).length;
    results.push({ name: `${name} not called`, pass: runs === 0, detail: runs === 0 ? ranText : `${name} ran ${runs}×` });
  }
  const ended = `the call ended: ${record.endReason.replaceAll('_', ' ')}`;
  if (checks.transferred !== undefined) {
    const transferred = record.endReason === 'transferred';
    results.push({ name: checks.transferred ? 'transferred' : 'not transferred', pass: transferred === checks.transferred, detail: ended });
  }
  if (checks.hung_up !== undefined) {
    const hungUp = record.endReason === 'agent_hung_up';
    results.push({ name: checks.hung_up ? 'the agent hung up' : 'the agent did not hang up', pass: hungUp === checks.hung_up, detail: ended });
  }
  if (checks.max_turns !== undefined) {
    results.push({
      name: `over within ${checks.max_turns} turns`,
      pass: call.turns <= checks.max_turns,
      detail: `${call.turns} turns; ${ended}`,
    });
  }
  if (checks.first_speak_ms !== undefined) {
    const slowest = call.firstSpeakMs.length === 0 ? undefined : Math.max(...call.firstSpeakMs);
    results.push({
      name: `first speak within ${checks.first_speak_ms} ms`,
      pass: slowest !== undefined && slowest <= checks.first_speak_ms,
      detail: slowest === undefined ? 'the agent never spoke' : `slowest ${Math.round(slowest)} ms of ${call.firstSpeakMs.length} answers`,
    });
  }
  if (language !== undefined) {
    const problem = languageProblem(record.language, language);
    results.push({ name: `the call in ${describeLanguage(language)}`, pass: problem === undefined, detail: problem ?? recordedLanguage(record.language) });
  }
  return results;
}

export function toolCheckName(check: ToolCheck): string {
  const args = check.arguments === undefined ? '' : ` with ${JSON.stringify(check.arguments)}`;
  const times = check.times === undefined ? '' : ` ${check.times}×`;
  return `${check.name} called${args}${times}`;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
