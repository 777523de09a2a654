/**
 * What an offline run (the built-in scripted model playing the agent) did and
 * did not check of the prompt folder. Its agent answers from the evals'
 * scripted rules or the demo script: a system.md promising every caller a
 * voucher passes offline. Every report of such a run says so, and names the
 * files its calls really used.
 */
import type { LoadedEval } from './load-evals.js';
import type { RunResult } from './run-eval.js';

export const SYSTEM_FILE = 'system.md';

export interface UncheckedPart {
  readonly part: string;
  readonly why: string;
}

export interface PromptCoverage {
  /** Used in at least one call: Hotline spoke its lines, or made its tool's request. */
  readonly exercised: readonly string[];
  /** What no scripted agent can check: only a real model reads it. */
  readonly unchecked: readonly UncheckedPart[];
  /** In the folder, but no call came to them. */
  readonly unreached: readonly string[];
}

export function offlineCoverage(runs: readonly RunResult[], evals: readonly LoadedEval[]): PromptCoverage {
  const present = new Set(runs.flatMap((run) => run.prompts?.present ?? []));
  const used = new Set(runs.flatMap((run) => run.prompts?.used ?? []));
  used.delete(SYSTEM_FILE);
  const readsPrompt = evals.some(({ evaluation }) => evaluation.scripted.agent?.some((rule) => rule.when_prompt !== undefined));
  const unchecked: UncheckedPart[] = [
    {
      part: SYSTEM_FILE,
      why:
        'the scripted agent never follows its instructions: what it tells the agent to say, promise or refuse is checked only with a real model' +
        (readsPrompt ? " (scripted.agent's when_prompt rules only look for words in it)" : '') +
        '; its settings (silence, keypad, voice …) do apply',
    },
  ];
  const hasTools = [...present].some((file) => file.startsWith('tools/')) || evals.some(({ evaluation }) => Object.keys(evaluation.tools).length > 0);
  if (hasTools) {
    unchecked.push({ part: 'tool descriptions', why: 'when a tool is called, and with what, the scripted rules decide, not the descriptions a model reads' });
  }
  return {
    exercised: [...used].sort(),
    unchecked,
    unreached: [...present].filter((file) => file !== SYSTEM_FILE && !used.has(file)).sort(),
  };
}

/** The notice, as the terminal and the JUnit file give it. */
export function coverageLines(coverage: PromptCoverage): string[] {
  return [
    'OFFLINE: the built-in scripted model played the agent. It answers from the evals\' scripted: rules (or the demo script), not from your prompts.',
    `  used by these calls: ${coverage.exercised.join(', ') || 'no prompt file'}`,
    ...coverage.unchecked.map(({ part, why }, index) => `  ${index === 0 ? 'NOT checked:' : '            '} ${part} — ${why}`),
    ...(coverage.unreached.length > 0 ? [`  not reached by these calls: ${coverage.unreached.join(', ')}`] : []),
    '  To check them, run the evals with a real model: set OPENAI_API_KEY (and OPENAI_BASE_URL, LLM_MODEL for another provider).',
  ];
}

/** One line for the end of the summary, where a pass is read. */
export function coverageReminder(coverage: PromptCoverage): string {
  return `offline: ${coverage.unchecked.map((u) => u.part).join(' and ')} not checked — a pass here says nothing about them`;
}
