/**
 * Starts, pauses, resumes and watches campaigns on a running Hotline through its admin API.
 */
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { config } from 'dotenv';
import type { CampaignProblem } from '../campaigns/errors.js';
import { progressLine, type CampaignProgress } from '../campaigns/progress.js';
import { hotlineAddress, httpUrl } from '../hotline-address.js';
import { describeNetworkError } from '../net-errors.js';
import { adminRefusal } from './admin-refusal.js';
import { readCampaignFile } from './campaign-file.js';
import { command, endQuietlyWhenOutputCloses, numberOption, parseCommandLine, usageToStderr, UsageError, wantsHelp } from '../command-line.js';
import { isMain } from './is-main.js';

export const USAGE = `Usage:
  npm run campaign -- start <campaign.yaml|json>   create and start a campaign; prints its id
  npm run campaign -- list                         every campaign's progress
  npm run campaign -- status <id> [--watch]        progress; --watch follows it until the campaign is done
  npm run campaign -- pause <id>                   no new calls (calls in progress go on)
  npm run campaign -- resume <id>
  npm run campaign -- results <id> [--out file.csv] one row per contact (stdout without --out)

  --url <url>        Hotline's address (default: BOT_URL, else http://localhost:PORT with PORT as Hotline
                     has it, else http://localhost:3000; all also read from .env)
  --token <token>    admin token (default: ADMIN_TOKEN, also read from .env)
  --interval-ms <ms> with --watch, how often to ask (default 1000)

The campaign file (YAML or JSON) holds name, contacts (a list of rows, or the path of a CSV file
beside it), time_zone, calling_hours, concurrency, pace_ms, answer_timeout_seconds, retries and
stop_list: see docs/outbound-and-campaigns.md. It is checked before anything is sent: each problem is shown
with its file and line, and nothing is created.

Example:
  npm run campaign -- start campaigns/spring.yaml
  npm run campaign -- status 3f0c… --watch`;

const CAMPAIGN = command({
  name: 'campaign',
  usage: USAGE,
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    watch: { type: 'boolean' },
    out: { type: 'string' },
    'interval-ms': { type: 'string' },
  },
});

type Out = (line: string) => void;
/** Raw output to a terminal, where --watch rewrites its line in place. */
type Terminal = (chunk: string) => void;
interface Connection {
  url: string;
  token: string;
  /** Where the address came from, when the user did not give it: said when Hotline cannot be reached. */
  from: string;
}

/** Hotline answered with an error; `problems` when it names each (a refused definition), `more` not listed. */
class ApiError extends Error {
  constructor(
    message: string,
    readonly problems: readonly CampaignProblem[] = [],
    readonly more = 0,
  ) {
    super(message);
  }
}

/**
 * Runs the command; resolves the exit code (2: bad usage, 1: the API refused or Hotline is unreachable).
 * Without `terminal` (a pipe, a log), --watch prints a line per change.
 */
export async function runCampaignCli(
  argv: string[],
  env: Record<string, string | undefined>,
  out: Out,
  usage: Out,
  terminal?: Terminal,
): Promise<number> {
  let line;
  let intervalMs;
  try {
    line = parseCommandLine(CAMPAIGN, argv);
    intervalMs = numberOption('--interval-ms', line.values['interval-ms'], 1000, { min: 10, integer: true });
  } catch (error) {
    if (error instanceof UsageError) return (usage(error.message), 2);
    throw error;
  }
  if (wantsHelp(line)) return (out(USAGE), 0);
  const [verb, arg, ...rest] = line.positionals;
  if (rest.length > 0) return (usage(`unexpected "${rest.join(' ')}"`), 2);
  const token = line.values.token ?? env.ADMIN_TOKEN?.trim();
  if (!token) return (usage('no admin token: set ADMIN_TOKEN or pass --token'), 2);
  let connection: Connection;
  try {
    const address = line.values.url === undefined ? hotlineAddress(env) : { url: httpUrl(line.values.url, '--url'), from: '' };
    connection = { ...address, token };
  } catch (error) {
    if (error instanceof UsageError) return (usage(error.message), 2);
    throw error;
  }
  const needsId = ['status', 'pause', 'resume', 'results'];
  if (verb !== undefined && needsId.includes(verb) && !arg) return (usage(`${verb} needs a campaign id`), 2);
  try {
    switch (verb) {
      case 'start': {
        if (!arg) return (usage('start needs a campaign file'), 2);
        return await start(connection, arg, out, usage);
      }
      case 'list': {
        const { campaigns } = (await request(connection, 'GET', '/api/campaigns')) as { campaigns: CampaignProgress[] };
        for (const c of campaigns) out(`${c.id}  ${progressLine(c)}`);
        if (campaigns.length === 0) out('no campaigns');
        return 0;
      }
      case 'status':
        return await status(connection, arg!, line.values.watch === true ? { intervalMs, terminal } : undefined, out);
      case 'pause':
      case 'resume':
        out(progressLine((await request(connection, 'POST', `/api/campaigns/${encodeURIComponent(arg!)}/${verb}`)) as CampaignProgress));
        return 0;
      case 'results': {
        const csv = (await request(connection, 'GET', `/api/campaigns/${encodeURIComponent(arg!)}/results.csv`)) as string;
        if (line.values.out) {
          await writeFile(line.values.out, csv);
          out(`results written to ${line.values.out}`);
        } else {
          out(csv.trimEnd());
        }
        return 0;
      }
      default:
        return (usage(verb === undefined ? 'say what to do: start, list, status, pause, resume or results' : `unknown command "${verb}"`), 2);
    }
  } catch (error) {
    out(`campaign: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

/** Checks the definition here, where its lines are known; only a definition without problems is sent. */
async function start(connection: Connection, file: string, out: Out, usage: Out): Promise<number> {
  let definition;
  try {
    definition = await readCampaignFile(file);
  } catch (error) {
    if (error instanceof UsageError) return (usage(error.message), 2);
    throw error;
  }
  if ('problems' in definition) {
    out(`campaign: ${file} has ${problemCount(definition.problems.length)}; nothing was created:`);
    for (const problem of definition.problems) out(`  ${problem}`);
    return 1;
  }
  let created;
  try {
    created = (await request(connection, 'POST', '/api/campaigns', definition.body)) as { id: string; contacts: number; merged?: number };
  } catch (error) {
    if (!(error instanceof ApiError) || error.problems.length === 0) throw error;
    out(`campaign: Hotline refused ${file} with ${problemCount(error.problems.length + error.more)}; nothing was created:`);
    for (const problem of error.problems) out(`  ${definition.locate(problem)}`);
    if (error.more > 0) out(`  and ${error.more} more`);
    return 1;
  }
  const merged = created.merged ? ` (${created.merged} duplicate ${created.merged === 1 ? 'row' : 'rows'} merged)` : '';
  out(`campaign ${created.id} started with ${created.contacts} contacts${merged}`);
  return 0;
}

function problemCount(count: number): string {
  return count === 1 ? '1 problem' : `${count} problems`;
}

/** One line, rewritten in place on a terminal; a line per change otherwise (a log, a pipe). */
async function status(
  connection: Connection,
  id: string,
  watch: { intervalMs: number; terminal: Terminal | undefined } | undefined,
  out: Out,
): Promise<number> {
  let last = '';
  for (;;) {
    const progress = (await request(connection, 'GET', `/api/campaigns/${encodeURIComponent(id)}`)) as CampaignProgress;
    const text = progressLine(progress);
    if (!watch) return (out(text), 0);
    const { terminal } = watch;
    if (text !== last) {
      if (terminal) terminal(`\r\x1b[K${text}`);
      else out(text);
      last = text;
    }
    if (progress.state === 'done') {
      terminal?.('\n');
      return 0;
    }
    await sleep(watch.intervalMs);
  }
}

async function request(connection: Connection, method: string, route: string, body?: unknown): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${connection.url}${route}`, {
      method,
      headers: { Authorization: `Bearer ${connection.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const from = connection.from === '' ? '' : ` (${connection.from})`;
    throw new Error(`could not reach Hotline at ${connection.url} (${describeNetworkError(error)}): is it running there${from}?`, { cause: error });
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    let problems: CampaignProblem[] = [];
    let more = 0;
    try {
      const answer = JSON.parse(text) as { error?: string; problems?: CampaignProblem[]; more?: number };
      message = answer.error ?? message;
      problems = Array.isArray(answer.problems) ? answer.problems : [];
      more = typeof answer.more === 'number' ? answer.more : 0;
    } catch {
      // Not JSON: the text itself says it.
    }
    throw new ApiError(`HTTP ${response.status}: ${adminRefusal(response.status, message, connection.url) ?? message}`, problems, more);
  }
  return response.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as unknown) : text;
}

if (isMain(import.meta.url)) {
  endQuietlyWhenOutputCloses();
  config({ quiet: true });
  process.exitCode = await runCampaignCli(
    process.argv.slice(2),
    process.env,
    (line) => console.log(line),
    usageToStderr('campaign'),
    process.stdout.isTTY ? (chunk) => process.stdout.write(chunk) : undefined,
  );
}
