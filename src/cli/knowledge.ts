/**
 * The business's documents from the command line: what a question finds in them, and what the
 * index holds. Each command first brings the index up to date with the folder, as a running
 * Hotline does when a file changes: what is shown is what the documents say now.
 *
 *   npm run knowledge -- search <question> [--limit n] [--json] | status [--json]
 */
import { stat } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { config as loadDotenv } from 'dotenv';
import { pino } from 'pino';
import { command, endQuietlyWhenOutputCloses, numberOption, parseCommandLine, UsageError, usageLine, wantsHelp } from '../command-line.js';
import { loadConfig, type Config } from '../config.js';
import { ConfigError } from '../errors.js';
import { KnowledgeBase, type KnowledgeStatus } from '../knowledge/knowledge-base.js';
import { listKnowledgeFiles } from '../knowledge/knowledge-folder.js';
import type { KnowledgeLanguage } from '../knowledge/terms.js';
import { KnowledgeRepository, type KnowledgeSource } from '../store/knowledge-repository.js';
import { openStore, type Store } from '../store/store.js';
import { isMain } from './is-main.js';
import { problemLine, searchJson, searchText, statusJson, statusText, type StatusReport } from './knowledge-output.js';

/** What --help prints. */
export const USAGE = `Usage: npm run knowledge -- <command> [options]

The business's documents Hotline answers from (KNOWLEDGE_DIR, by default the knowledge folder of
PROMPTS_DIR), as the index in its store holds them. The folder, the store (DATABASE_FILE or
DATABASE_URL) and the other settings are Hotline's: the shell's environment, then a .env file in the
working directory. Each command first indexes the files that changed since the index was made (as a
running Hotline does), so it shows what the documents say now; it says on stderr how many it indexed.

Commands:
  search <question>   the passages the question finds, best first, each with its file, heading, line
                      and score: what the model would be given beside a caller's words
    --limit <n>       at most this many passages (default: KNOWLEDGE_PASSAGES, 3 unless set)
  status              every document of the folder with its language, its passages, when it was
                      indexed and the embedding model of its vectors (if any); each file that cannot
                      be read, with its line; and the store it is indexed in

Options:
  --json              the same as JSON, for a script

Exits 1 when the knowledge base is off (KNOWLEDGE=false) or the store cannot be opened. A file that
cannot be read is listed by status, not an error: npm run prompts:check fails on it.

Example:
  npm run knowledge -- search "do you deliver to Potsdam"
  npm run knowledge -- status`;

const KNOWLEDGE = command({
  name: 'knowledge',
  usage: USAGE,
  allowPositionals: true,
  options: { limit: { type: 'string' }, json: { type: 'boolean' } },
});

const COMMANDS = ['search', 'status'] as const;

interface Io {
  readonly stdout: Writable;
  readonly stderr: { write(text: string): boolean };
}

type Request =
  | { readonly which: 'search'; readonly question: string; readonly limit: number | undefined; readonly json: boolean }
  | { readonly which: 'status'; readonly json: boolean };

/** Runs the command line; the exit code. */
export async function runKnowledgeCli(argv: string[], env: Record<string, string | undefined>, io: Io): Promise<number> {
  let request: Request;
  try {
    const line = parseCommandLine(KNOWLEDGE, argv);
    if (wantsHelp(line)) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    request = requestOf(line.positionals, line.values);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${usageLine('knowledge', error.message)}\n`);
      return 2;
    }
    throw error;
  }

  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`knowledge ${request.which}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const settings = config.knowledge;
  if (!settings) {
    io.stderr.write(`knowledge ${request.which}: the knowledge base is off (KNOWLEDGE=false): Hotline neither indexes nor searches the documents\n`);
    return 1;
  }

  // Only warnings, of the store: what the knowledge base would log (a file that cannot be read) is said here in words.
  const logger = pino({ level: 'warn' }, process.stderr);
  let store: Store;
  try {
    // Migrated as Hotline's start would (the index's tables may be new to the store), under its lock; not claimed: Hotline may be running on it.
    store = await openStore({ databaseFile: config.databaseFile, databaseUrl: config.databaseUrl }, logger, { claim: false });
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`knowledge ${request.which}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  try {
    const repository = new KnowledgeRepository(store);
    const before = await repository.sources();
    const passages = request.which === 'search' ? (request.limit ?? settings.passages) : settings.passages;
    const base = await KnowledgeBase.open(
      repository,
      repository,
      { dir: settings.dir, language: settings.language, passages, watch: false },
      logger.child({}, { level: 'silent' }),
    );
    try {
      // The vectors' neighbours as a running Hotline made them; none are made here (that takes the endpoint, and time).
      if (settings.embeddings) base.attach({ changed: () => undefined, neighbours: (ids) => repository.neighboursOf(ids) });
      const status = await base.status();
      tellChanges(before, status, io);
      if (request.which === 'search') {
        for (const problem of status.problems) io.stderr.write(`${problemLine(problem)} (${leftOrKept(problem.file, status)})\n`);
        const found = await base.search(request.question);
        io.stdout.write(request.json ? searchJson(found) : searchText(request.question, found, status.sources.length === 0 ? status.dir : undefined));
        return 0;
      }
      const report = await statusReport(status, settings.language, store);
      io.stdout.write(request.json ? statusJson(report) : statusText(report));
      return 0;
    } finally {
      await base.close();
    }
  } finally {
    await store.close();
  }
}

function requestOf(positionals: string[], values: { limit?: string | undefined; json?: boolean | undefined }): Request {
  const [first, ...rest] = positionals;
  if (first === undefined) throw new UsageError(`say what to do: ${COMMANDS.join(', ')}`);
  if (!(COMMANDS as readonly string[]).includes(first)) throw new UsageError(`unknown command "${first}": use ${COMMANDS.join(', ')}`);
  const json = values.json ?? false;
  if (first === 'status') {
    if (rest.length > 0) throw new UsageError(`unexpected "${rest[0]}" after status`);
    if (values.limit !== undefined) throw new UsageError('--limit goes with search');
    return { which: 'status', json };
  }
  // Unquoted words are one question too: `search do you deliver` asks what `search "do you deliver"` does.
  const question = rest.join(' ').trim();
  if (question === '') throw new UsageError('search needs a question, e.g. search "do you deliver to Potsdam"');
  const limit = values.limit === undefined ? undefined : numberOption('--limit', values.limit, 0, { min: 1, integer: true });
  return { which: 'search', question, limit, json };
}

/** One line on stderr when the index had to catch up with the folder: output on stdout stays the answer alone. */
function tellChanges(before: readonly KnowledgeSource[], after: KnowledgeStatus, io: Io): void {
  const old = new Map(before.map((source) => [source.path, source.hash]));
  const indexed = after.sources.filter((source) => old.get(source.path) !== source.hash).length;
  const now = new Set(after.sources.map((source) => source.path));
  const removed = before.filter((source) => !now.has(source.path)).length;
  if (indexed === 0 && removed === 0) return;
  const parts = [...(indexed > 0 ? [`${plural(indexed, 'file')} indexed`] : []), ...(removed > 0 ? [`${plural(removed, 'file')} removed (no longer in the folder)`] : [])];
  io.stderr.write(`the index caught up with ${after.dir}: ${parts.join(', ')}\n`);
}

function leftOrKept(file: string, status: KnowledgeStatus): string {
  return status.sources.some((source) => source.path === file) ? 'its last good version is searched' : 'it is left out until it can be read';
}

async function statusReport(status: KnowledgeStatus, language: KnowledgeLanguage, store: Store): Promise<StatusReport> {
  const indexed = new Map(status.sources.map((source) => [source.path, source]));
  const files = (await listKnowledgeFiles(status.dir, language)).map((file) => ({
    file: file.file,
    language: indexed.get(file.file)?.language ?? file.language,
    indexed: indexed.get(file.file),
    problem: status.problems.find((problem) => problem.file === file.file),
  }));
  const dirExists = await stat(status.dir).then(
    (found) => found.isDirectory(),
    () => false,
  );
  return { dir: status.dir, dirExists, store: { dialect: store.dialect, where: store.where }, files, passages: status.passages, problems: status.problems };
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

if (isMain(import.meta.url)) {
  loadDotenv({ quiet: true });
  endQuietlyWhenOutputCloses();
  runKnowledgeCli(process.argv.slice(2), process.env, { stdout: process.stdout, stderr: process.stderr }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`knowledge failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
