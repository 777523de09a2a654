/**
 * Checks a prompts folder the way Hotline loads it: every file with the
 * placeholders it uses and what is wrong with it, the clips system.md names,
 * report.md's fields, the tool files in its tools folder (starting the MCP
 * servers of mcp.yaml to check the tools they list), voicemail.yaml if there
 * is one, and the documents of its knowledge folder (each one that cannot be
 * read, with its line). The environment is Hotline's: the shell's, then `.env`.
 *
 *   npm run prompts:check -- [dir]      (default: PROMPTS_DIR, else ./prompts; --help for the usage)
 *
 * Exits 1 on any problem, warnings included, so CI can refuse a prompt edit
 * that would make a call speak a gap.
 */
import path from 'node:path';
import { config as loadDotenv } from 'dotenv';
import { checkedEvalFiles } from '../evals/check-evals.js';
import { checkedKnowledgeFiles, checkPrompts, type CheckedFile } from '../prompts-check.js';
import { command, commandLineOrExit, endQuietlyWhenOutputCloses, UsageError } from '../command-line.js';

const USAGE = `Usage: npm run prompts:check -- [folder]

Checks a prompts folder the way Hotline loads it: prints every file with the placeholders it uses
and what is wrong with it, the audio clips system.md names, the fields report.md asks of each call's
report, the files of its tools folder (HTTP tools, context.yaml, mcp.yaml) with the environment
variables they need (one that is not set is a problem: Hotline leaves its tool out), the tools
mcp.yaml's servers list (each server is started or connected to for this, up to 30 s),
voicemail.yaml (the phrases added to voicemail detection's built-in ones) if there is one, and the
documents of its knowledge folder: each is read into passages as Hotline reads it, and one that
cannot be is a problem with its file and line (one with no text to search is a warning). The
environment is Hotline's: the shell's, then a .env file in the working directory. Exits 1 on any
problem, warnings included, so CI can refuse a prompt edit that would make a call speak a gap or
play noise.
  folder     the prompts folder to check (default: PROMPTS_DIR, else ./prompts)

Example:
  npm run prompts:check -- ./prompts`;

const PROMPTS_CHECK = command({ name: 'prompts:check', usage: USAGE, allowPositionals: true, options: {} });

function folderFrom(positionals: string[], env: Record<string, string | undefined>): string {
  if (positionals.length > 1) throw new UsageError(`give one folder, not ${positionals.length}`);
  return path.resolve(positionals[0] ?? env.PROMPTS_DIR ?? 'prompts');
}

/** As long as Hotline gives an MCP server to come up (`npx` may download it first). */
const MCP_TIMEOUT_MS = 30_000;

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

async function main(): Promise<number> {
  // As Hotline reads it: PROMPTS_DIR and a tool's variables are as set for it, or not.
  loadDotenv({ quiet: true });
  // Before the folder is read: --help and bad usage end the process here.
  const dir = commandLineOrExit(PROMPTS_CHECK, process.argv.slice(2), ({ positionals }) => folderFrom(positionals, process.env));
  endQuietlyWhenOutputCloses();
  const alsoCheck = async (folder: string): Promise<CheckedFile[]> => {
    const [knowledge, evals] = await Promise.all([checkedKnowledgeFiles(folder), checkedEvalFiles(folder)]);
    return [...knowledge, ...evals];
  };
  const check = await checkPrompts(dir, process.env, { mcpTimeoutMs: MCP_TIMEOUT_MS, alsoCheck });
  const lines = [`prompts in ${dir}`];
  const show = (file: CheckedFile) => {
    lines.push(`${file.file}: ${file.summary}`);
    for (const problem of file.problems) lines.push(`  ${problem.severity}: ${problem.message}`);
  };
  // The prompt files and their clips first, then report.md, the tools folder, voicemail.yaml, the knowledge folder and the evals.
  check.files.filter((f) => f.kind === 'prompt').forEach(show);
  for (const clip of check.clips) lines.push(`audio.${clip.name}: ${clip.file} (${(clip.durationMs / 1000).toFixed(1)} s)`);
  check.files.filter((f) => f.kind !== 'prompt').forEach(show);
  const count = (kind: CheckedFile['kind']) => check.files.filter((f) => f.kind === kind).length;
  // Without a tools folder the summary stays as it always was.
  const toolFiles = count('tool') > 0 ? `${plural(count('tool'), 'tool file')}, ` : '';
  const evals = count('eval') > 0 ? `${plural(count('eval'), 'eval')}, ` : '';
  lines.push(`${plural(count('prompt') + count('report'), 'file')}, ${toolFiles}${evals}${plural(check.problems, 'problem')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return check.problems > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`prompts:check failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  },
);
