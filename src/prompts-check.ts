/**
 * Everything `npm run prompts:check` reports of a prompts folder, as data: the
 * prompt files, the clips system.md names, report.md, the tools folder and
 * voicemail.yaml. The command prints it; the dashboard shows it.
 */
import { checkPromptsFolder } from './prompts/prompt-store.js';
import { checkReportPrompt } from './reports/report-prompt.js';
import { checkToolsFolder } from './tools/tool-store.js';
import { checkVoicemailFile } from './voicemail/phrases-file.js';

export interface CheckedProblem {
  readonly severity: 'error' | 'warning';
  readonly message: string;
}

export interface CheckedFile {
  readonly file: string;
  /** What the file holds: its placeholders, report fields, tool, phrases. */
  readonly summary: string;
  readonly problems: readonly CheckedProblem[];
  readonly kind: 'prompt' | 'report' | 'tool' | 'voicemail';
}

export interface PromptsCheck {
  readonly dir: string;
  readonly files: readonly CheckedFile[];
  readonly clips: readonly { readonly name: string; readonly file: string; readonly durationMs: number }[];
  /** Problems of every file, warnings included. */
  readonly problems: number;
}

/** `env` fills the tool files' `${NAME}` references; a missing one is listed, never a problem. */
export async function checkPrompts(dir: string, env: Readonly<Record<string, string | undefined>>): Promise<PromptsCheck> {
  const [folder, report, tools, voicemail] = await Promise.all([
    checkPromptsFolder(dir),
    // Optional files: without them nothing is listed.
    checkReportPrompt(dir),
    checkToolsFolder(dir, env),
    checkVoicemailFile(dir),
  ]);
  const files: CheckedFile[] = [
    ...folder.files.map((f): CheckedFile => ({
      file: f.file,
      summary: f.placeholders.length > 0 ? f.placeholders.map((p) => `{{${p}}}`).join(' ') : '(no placeholders)',
      problems: f.problems.map(({ severity, message }) => ({ severity, message })),
      kind: 'prompt',
    })),
    ...(report ? [{ file: report.file, summary: report.summary, problems: report.problems.map((message) => ({ severity: 'error' as const, message })), kind: 'report' as const }] : []),
    ...tools.files.map((f): CheckedFile => ({ file: f.file, summary: f.summary, problems: f.problems.map(({ severity, message }) => ({ severity, message })), kind: 'tool' })),
    ...(voicemail
      ? [{ file: voicemail.file, summary: voicemail.summary, problems: voicemail.problems.map(({ severity, message }) => ({ severity, message })), kind: 'voicemail' as const }]
      : []),
  ];
  return { dir, files, clips: folder.clips, problems: files.reduce((n, f) => n + f.problems.length, 0) };
}
