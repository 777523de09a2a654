/**
 * What a running Hotline reads of a prompts folder, checked, as data: the prompt files, the clips
 * system.md names, report.md, the tools folder and voicemail.yaml. The dashboard shows it;
 * `npm run prompts:check` prints it with the evals and the knowledge folder's documents added
 * (`alsoCheck`), which only the tools above the product read.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { checkKnowledgeFolder } from './knowledge/knowledge-check.js';
import { checkPromptsFolder } from './prompts/prompt-store.js';
import { checkReportPrompt } from './reports/report-prompt.js';
import { checkToolsFolder, type ToolsCheckOptions } from './tools/tools-check.js';
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
  readonly kind: 'prompt' | 'report' | 'tool' | 'voicemail' | 'knowledge' | 'eval';
}

export interface PromptsCheck {
  readonly dir: string;
  readonly files: readonly CheckedFile[];
  readonly clips: readonly { readonly name: string; readonly file: string; readonly durationMs: number }[];
  /** Problems of every file, warnings included. */
  readonly problems: number;
}

export interface CheckOptions {
  /**
   * Start the MCP servers of tools/mcp.yaml and check the tools they list,
   * giving each this long: the command does, the dashboard (which shows the
   * check of a running Hotline) does not.
   */
  readonly mcpTimeoutMs?: number;
  /** Files of the folder that Hotline itself never reads (the evals), checked by whoever reads them. */
  readonly alsoCheck?: (dir: string) => Promise<readonly CheckedFile[]>;
}

/**
 * `env` fills the tool files' `${NAME}` references, as Hotline's would: a
 * variable that is not set is a problem (its tool is not offered), unless the
 * demo model would run and set it itself (SHOP_API_URL, the demo shop's).
 */
export async function checkPrompts(dir: string, env: Readonly<Record<string, string | undefined>>, options: CheckOptions = {}): Promise<PromptsCheck> {
  const toolOptions: ToolsCheckOptions = {
    standIns: demoStandIns(env),
    ...(options.mcpTimeoutMs !== undefined ? { mcpTimeoutMs: options.mcpTimeoutMs } : {}),
  };
  const [folder, report, tools, voicemail, evals] = await Promise.all([
    checkPromptsFolder(dir),
    // Optional files: without them nothing is listed.
    checkReportPrompt(dir),
    checkToolsFolder(dir, env, toolOptions),
    checkVoicemailFile(dir),
    options.alsoCheck?.(dir) ?? [],
  ]);
  const files: CheckedFile[] = [
    ...folder.files.map((f): CheckedFile => ({
      file: f.file,
      summary: f.summary ?? (f.placeholders.length > 0 ? f.placeholders.map((p) => `{{${p}}}`).join(' ') : '(no placeholders)'),
      problems: f.problems.map(({ severity, message }) => ({ severity, message })),
      kind: 'prompt',
    })),
    ...(report ? [{ file: report.file, summary: report.summary, problems: report.problems.map((message) => ({ severity: 'error' as const, message })), kind: 'report' as const }] : []),
    ...tools.files.map((f): CheckedFile => ({ file: f.file, summary: f.summary, problems: f.problems.map(({ severity, message }) => ({ severity, message })), kind: 'tool' })),
    ...(voicemail
      ? [{ file: voicemail.file, summary: voicemail.summary, problems: voicemail.problems.map(({ severity, message }) => ({ severity, message })), kind: 'voicemail' as const }]
      : []),
    ...evals,
  ];
  return { dir, files, clips: folder.clips, problems: files.reduce((n, f) => n + f.problems.length, 0) };
}

/**
 * The knowledge folder of `dir` as one entry, `knowledge/: 8 documents, 31 passages`, each
 * document that cannot be read a problem with its file and line; nothing without the folder. For
 * `npm run prompts:check` (its `alsoCheck`), not the dashboard's check: reading every document
 * (a PDF's pages too) would hold a running Hotline's event loop, which its own index never does.
 */
export async function checkedKnowledgeFiles(dir: string): Promise<CheckedFile[]> {
  const folder = path.join(dir, 'knowledge');
  const exists = await stat(folder).then(
    (found) => found.isDirectory(),
    () => false,
  );
  if (!exists) return [];
  const check = await checkKnowledgeFolder(folder, (file) => `knowledge/${file}`);
  const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;
  return [{ file: 'knowledge/', summary: `${plural(check.documents, 'document')}, ${plural(check.passages, 'passage')}`, problems: check.problems, kind: 'knowledge' }];
}

/**
 * What Hotline itself sets for the tools when it runs the demo model, which
 * it does with neither OPENAI_API_KEY nor OPENAI_BASE_URL set, outside
 * production (config.ts): the shipped tools' SHOP_API_URL, its fake shop's
 * address (server.ts). A plain checkout's check is then clean, as its
 * `npm start` is.
 */
function demoStandIns(env: Readonly<Record<string, string | undefined>>): ToolsCheckOptions['standIns'] {
  const set = (name: string): boolean => (env[name]?.trim() ?? '') !== '';
  const demo = !set('OPENAI_API_KEY') && !set('OPENAI_BASE_URL') && env.NODE_ENV?.trim() !== 'production';
  if (!demo || set('SHOP_API_URL')) return {};
  return { SHOP_API_URL: { value: 'http://127.0.0.1/demo-shop', note: "unset: the demo model's fake shop stands in" } };
}
