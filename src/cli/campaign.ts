/**
 * Starts, pauses, resumes and watches campaigns on a running Hotline through its admin API.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { config } from 'dotenv';
import { parse as parseYaml } from 'yaml';
import { progressLine, type CampaignProgress } from '../campaigns/progress.js';
import { describeNetworkError } from '../net-errors.js';
import { command, numberOption, parseCommandLine, usageToStderr, UsageError, wantsHelp } from '../command-line.js';
import { isMain } from './is-main.js';

export const USAGE = `Usage:
  npm run campaign -- start <campaign.yaml|json>   create and start a campaign; prints its id
  npm run campaign -- list                         every campaign's progress
  npm run campaign -- status <id> [--watch]        progress; --watch follows it until the campaign is done
  npm run campaign -- pause <id>                   no new calls (calls in progress go on)
  npm run campaign -- resume <id>
  npm run campaign -- results <id> [--out file.csv] one row per contact (stdout without --out)

  --url <url>        Hotline's address (default: BOT_URL, else http://localhost:3000)
  --token <token>    admin token (default: ADMIN_TOKEN, also read from .env)
  --interval-ms <ms> with --watch, how often to ask (default 1000)

The campaign file (YAML or JSON) holds name, contacts (a list of rows, or the path of a CSV file
beside it), time_zone, calling_hours, concurrency, pace_ms, answer_timeout_seconds, retries and
stop_list: see README "Campaigns".

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
  const connection: Connection = { url: (line.values.url ?? env.BOT_URL ?? 'http://localhost:3000').replace(/\/+$/, ''), token };
  const needsId = ['status', 'pause', 'resume', 'results'];
  if (verb !== undefined && needsId.includes(verb) && !arg) return (usage(`${verb} needs a campaign id`), 2);
  try {
    switch (verb) {
      case 'start': {
        if (!arg) return (usage('start needs a campaign file'), 2);
        const created = (await request(connection, 'POST', '/api/campaigns', await readCampaignFile(arg))) as { id: string; contacts: number; merged?: number };
        const merged = created.merged ? ` (${created.merged} duplicate ${created.merged === 1 ? 'row' : 'rows'} merged)` : '';
        out(`campaign ${created.id} started with ${created.contacts} contacts${merged}`);
        return 0;
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

/** The definition, with a `contacts` path read as the CSV (or JSON) file it names, relative to the definition. */
async function readCampaignFile(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  const definition = (file.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as Record<string, unknown>;
  const contacts = definition.contacts;
  if (typeof contacts === 'string' && !contacts.includes('\n')) {
    const contactsFile = path.resolve(path.dirname(file), contacts);
    const body = await readFile(contactsFile, 'utf8');
    definition.contacts = contactsFile.endsWith('.json') ? (JSON.parse(body) as unknown) : body;
  }
  return definition;
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
    throw new Error(`could not reach Hotline at ${connection.url} (${describeNetworkError(error)})`, { cause: error });
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: string; message?: string }).error ?? message;
    } catch {
      // Not JSON: the text itself says it.
    }
    throw new Error(`HTTP ${response.status}: ${message}`);
  }
  return response.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as unknown) : text;
}

if (isMain(import.meta.url)) {
  config({ quiet: true });
  process.exitCode = await runCampaignCli(
    process.argv.slice(2),
    process.env,
    (line) => console.log(line),
    usageToStderr('campaign'),
    process.stdout.isTTY ? (chunk) => process.stdout.write(chunk) : undefined,
  );
}
