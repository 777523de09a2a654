/**
 * Asks a running Hotline to place outbound calls through its admin API.
 *
 *   npm run call -- <number> [--var name=value]… [--flow <aiFlowId>] [--billing-device <d>]
 *   npm run call -- --csv contacts.csv [--concurrency 2] [--pause-ms 1000] [--number-column phone]
 */
import { describeNetworkError } from '../net-errors.js';
import { isMain } from './is-main.js';
import { adminRefusal } from './admin-refusal.js';
import { command, endQuietlyWhenOutputCloses, numberOption, parseCommandLine, usageToStderr, UsageError, wantsHelp } from '../command-line.js';
import { hotlineAddress, httpUrl } from '../hotline-address.js';
import { normalizePhoneNumber } from '../phone/phone-number.js';
import { ConfigError } from '../errors.js';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import { config } from 'dotenv';

export const USAGE = `Usage:
  npm run call -- <number> [--var name=value]... [--flow <aiFlowId>] [--billing-device <device>]
  npm run call -- --csv <file> [--concurrency 2] [--pause-ms 1000] [--number-column <column>]
                   [--var name=value]... [--flow <aiFlowId>] [--billing-device <device>]

Asks the running Hotline (POST <url>/api/calls) to call each number.
  --url <url>                Hotline's address (default: BOT_URL, else http://localhost:PORT with PORT as
                             Hotline has it, else http://localhost:3000; all also read from .env)
  --token <token>            admin token (default: ADMIN_TOKEN, also read from .env)
  --var name=value           a variable for the greeting and prompt; repeatable. With --csv, a default
                             for every row
  --flow <aiFlowId>          the AI flow that calls (default: the running Hotline's AIFLOW_ID)
  --billing-device <device>  the billing device (default: the running Hotline's AIFLOW_BILLING_DEVICE)
  --csv <file>               one call per row; the header names the columns. The number is in the column
                             phone, phone_number, number or toPhoneNumber (or --number-column); the columns
                             aiFlowId and billingDevice are passed as such; every other column is a variable.
                             Every row is checked first (national numbers need DEFAULT_COUNTRY_CODE): with
                             any bad or repeated number, each is listed with its line and no call is placed
  --number-column <column>   with --csv, the column that holds the number (default: found by name, as above)
  --concurrency <n>          with --csv, at most n requests at once (default 2)
  --pause-ms <ms>            with --csv, at least this long between starting two calls (default 1000)

Example:
  npm run call -- +49 151 1234567 --var name=Anna --var topic="your order"`;

const CALL = command({
  name: 'call',
  usage: USAGE,
  allowPositionals: true,
  options: {
    var: { type: 'string', multiple: true },
    flow: { type: 'string' },
    'billing-device': { type: 'string' },
    csv: { type: 'string' },
    concurrency: { type: 'string' },
    'pause-ms': { type: 'string' },
    'number-column': { type: 'string' },
    url: { type: 'string' },
    token: { type: 'string' },
  },
});

const NUMBER_COLUMNS = ['phone', 'phone_number', 'number', 'tophonenumber'];
// Hotline's admin API refuses other variable names; checked here so a bad header fails before any call.
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const REQUEST_TIMEOUT_MS = 30_000;

type Out = (line: string) => void;

interface Target {
  /** As written in the arguments or the file: what the user will recognise in the output. */
  number: string;
  variables: Record<string, string>;
  aiFlowId: string | undefined;
  billingDevice: string | undefined;
  /** Line in the CSV file, for the list of failures. */
  line?: number;
}

type Outcome =
  | { ok: true; toPhoneNumber: string }
  | {
      ok: false;
      reason: string;
      status?: number;
      /** Not about this row (Hotline unreachable, token refused, API off): every further row would fail alike. */
      fatal: boolean;
    };

interface Connection {
  url: string;
  token: string;
  /** Where the address came from, when the user did not give it: said when Hotline cannot be reached. */
  from: string;
}

/**
 * Runs the command line; returns the exit code: 0 all initiated, 1 any failed, 2 bad usage.
 * Bad usage goes to `reportUsage`: by default to `out` with the usage; the script sends one line to stderr.
 */
export async function runCallCli(
  argv: string[],
  env: Record<string, string | undefined>,
  out: Out,
  reportUsage: (message: string) => void = (message) => out(`${message}\n\n${USAGE}`),
): Promise<number> {
  try {
    const parsed = parseArguments(argv);
    if (parsed.help) {
      out(USAGE);
      return 0;
    }
    const connection = connectionFrom(parsed, env);
    if (typeof connection === 'string') {
      out(connection);
      return 2;
    }
    if (parsed.csv === undefined) {
      const outcome = await placeCall(connection, {
        number: parsed.number,
        variables: parsed.variables,
        aiFlowId: parsed.flow,
        billingDevice: parsed.billingDevice,
      });
      out(formatOutcome(parsed.number, outcome));
      return outcome.ok ? 0 : 1;
    }
    const targets = await readCsvTargets(parsed.csv, parsed);
    // Like a campaign: every row is checked before the first call, so a bad row never leaves half a list called.
    const { problems, checked } = checkTargets(targets, env.DEFAULT_COUNTRY_CODE);
    if (problems.length > 0) {
      out(`${parsed.csv}: ${problems.length} of ${targets.length} rows cannot be called, so no call was placed:`);
      for (const problem of problems) out(`  ${problem}`);
      out('Fix these rows and run the command again.');
      return 2;
    }
    return await runBatch(connection, checked, parsed, out);
  } catch (error) {
    if (error instanceof UsageError) {
      reportUsage(error.message);
      return 2;
    }
    throw error;
  }
}

interface ParsedArguments {
  help: boolean;
  number: string;
  csv: string | undefined;
  variables: Record<string, string>;
  flow: string | undefined;
  billingDevice: string | undefined;
  concurrency: number;
  pauseMs: number;
  numberColumn: string | undefined;
  url: string | undefined;
  token: string | undefined;
}

function parseArguments(argv: string[]): ParsedArguments {
  const commandLine = parseCommandLine(CALL, argv);
  const { values, positionals } = commandLine;
  const help = wantsHelp(commandLine);
  // `npm run call -- +49 151 1234567` arrives as three words; Hotline reads them as one number.
  const number = positionals.join(' ').trim();
  if (!help) {
    if (values.csv === undefined && number === '') throw new UsageError('Give a number to call, or --csv <file>.');
    if (values.csv !== undefined && number !== '') throw new UsageError('Give either a number or --csv <file>, not both.');
  }
  return {
    help,
    number,
    csv: values.csv,
    variables: parseVariables(values.var ?? []),
    flow: nonEmpty(values.flow),
    billingDevice: nonEmpty(values['billing-device']),
    concurrency: numberOption('--concurrency', values.concurrency, 2, { min: 1, integer: true }),
    pauseMs: numberOption('--pause-ms', values['pause-ms'], 1000, { integer: true }),
    numberColumn: nonEmpty(values['number-column']),
    url: nonEmpty(values.url),
    token: nonEmpty(values.token),
  };
}

function parseVariables(pairs: string[]): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const name = at < 0 ? '' : pair.slice(0, at).trim();
    if (!VARIABLE_NAME.test(name)) {
      throw new UsageError(`--var "${pair}" is not name=value (names are letters, digits, _ . - and start with a letter or _).`);
    }
    variables[name] = pair.slice(at + 1);
  }
  return variables;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** The connection, or the message explaining what is missing; UsageError for an address that cannot be one. */
function connectionFrom(parsed: ParsedArguments, env: Record<string, string | undefined>): Connection | string {
  const token = parsed.token ?? nonEmpty(env.ADMIN_TOKEN);
  if (token === undefined) {
    return 'No admin token: set ADMIN_TOKEN (in the environment or .env) to the value the running Hotline uses, or pass --token.';
  }
  if (parsed.url !== undefined) return { url: httpUrl(parsed.url, '--url'), token, from: '' };
  return { ...hotlineAddress(env), token };
}

async function placeCall(connection: Connection, target: Target): Promise<Outcome> {
  const body = {
    toPhoneNumber: target.number,
    ...(Object.keys(target.variables).length > 0 ? { variables: target.variables } : {}),
    ...(target.aiFlowId ? { aiFlowId: target.aiFlowId } : {}),
    ...(target.billingDevice ? { billingDevice: target.billingDevice } : {}),
  };
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${connection.url}/api/calls`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${connection.token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    text = await response.text();
  } catch (error) {
    const where = displayUrl(connection.url);
    if (error instanceof Error && error.name === 'TimeoutError') {
      return { ok: false, reason: `Hotline at ${where} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`, fatal: false };
    }
    const detail = redact(describeNetworkError(error), connection.token);
    const from = connection.from === '' ? '' : ` (${connection.from})`;
    return { ok: false, reason: `could not reach Hotline (${detail}): is Hotline running at ${where}${from}?`, fatal: true };
  }
  const answer = parseJson(text);
  if (response.status === 201) {
    const normalised = (answer as { toPhoneNumber?: unknown } | undefined)?.toPhoneNumber;
    return { ok: true, toPhoneNumber: typeof normalised === 'string' ? normalised : target.number };
  }
  const error = (answer as { error?: unknown } | undefined)?.error;
  const said = typeof error === 'string' ? error : text.trim().slice(0, 200) || response.statusText || 'no reason given';
  const reason = adminRefusal(response.status, said, displayUrl(connection.url)) ?? said;
  // 401: the token is wrong for every row; 403/404: the admin API is off, refused, or this is not Hotline; 503: Hotline
  // places no calls now (outbound calling not configured, or it is shutting down).
  return { ok: false, reason, status: response.status, fatal: [401, 403, 404, 503].includes(response.status) };
}

function formatOutcome(number: string, outcome: Outcome): string {
  if (outcome.ok) return `✓ ${outcome.toPhoneNumber} initiated`;
  return `✗ ${number}: ${outcome.reason}${outcome.status === undefined ? '' : ` (HTTP ${outcome.status})`}`;
}

async function readCsvTargets(file: string, parsed: ParsedArguments): Promise<Target[]> {
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let rows: { record: Record<string, string>; info: { lines: number } }[];
  try {
    rows = parse(content, { columns: true, bom: true, trim: true, skip_empty_lines: true, info: true });
  } catch (error) {
    throw new UsageError(`${file} is not valid CSV: ${error instanceof Error ? error.message : String(error)}`);
  }
  const header = rows[0] ? Object.keys(rows[0].record) : [];
  if (rows.length === 0) throw new UsageError(`${file} has no rows below its header.`);

  const find = (names: string[]) => header.find((column) => names.includes(column.toLowerCase()));
  const numberColumn = parsed.numberColumn === undefined ? find(NUMBER_COLUMNS) : header.find((c) => c === parsed.numberColumn);
  if (numberColumn === undefined) {
    const wanted = parsed.numberColumn === undefined ? 'phone, phone_number, number or toPhoneNumber' : parsed.numberColumn;
    throw new UsageError(`${file} has no number column (${wanted}); its columns are: ${header.join(', ')}. Use --number-column.`);
  }
  const flowColumn = find(['aiflowid']);
  const deviceColumn = find(['billingdevice']);
  const variableColumns = header.filter((c) => c !== numberColumn && c !== flowColumn && c !== deviceColumn);
  const badName = variableColumns.find((c) => !VARIABLE_NAME.test(c));
  if (badName !== undefined) {
    throw new UsageError(`Column "${badName}" cannot be a variable name: use letters, digits, _ . - and start with a letter or _.`);
  }

  return rows.map(({ record, info }) => {
    const variables = { ...parsed.variables };
    for (const column of variableColumns) {
      // A blank cell is no value: the greeting then falls back as if the variable were not given.
      const value = record[column];
      if (value) variables[column] = value;
    }
    return {
      number: record[numberColumn] ?? '',
      variables,
      aiFlowId: nonEmpty(flowColumn === undefined ? undefined : record[flowColumn]) ?? parsed.flow,
      billingDevice: nonEmpty(deviceColumn === undefined ? undefined : record[deviceColumn]) ?? parsed.billingDevice,
      line: info.lines,
    };
  });
}

/**
 * What stands in the way of calling every row, one line per bad row: a
 * number that cannot be one (normalised as Hotline does, with this
 * DEFAULT_COUNTRY_CODE) or one already on an earlier row. `checked` has the
 * rows with their numbers normalised: what is then sent is what was checked.
 */
function checkTargets(targets: Target[], defaultCountryCode: string | undefined): { problems: string[]; checked: Target[] } {
  const problems: string[] = [];
  const checked: Target[] = [];
  const firstLine = new Map<string, number | undefined>();
  for (const target of targets) {
    const where = `line ${target.line}`;
    if (target.number.trim() === '') {
      problems.push(`${where}: no number in this row`);
      continue;
    }
    let number: string;
    try {
      number = normalizePhoneNumber(target.number, { defaultCountryCode });
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(`${error.message}: fix DEFAULT_COUNTRY_CODE (in the environment or .env).`);
      problems.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const earlier = firstLine.get(number);
    if (firstLine.has(number)) {
      problems.push(`${where}: ${target.number} is ${number}, already on line ${earlier}; a person is called once, so remove one of the rows`);
      continue;
    }
    firstLine.set(number, target.line);
    checked.push({ ...target, number });
  }
  return { problems, checked };
}

async function runBatch(connection: Connection, targets: Target[], parsed: ParsedArguments, out: Out): Promise<number> {
  const failures: { target: Target; line: string }[] = [];
  let initiated = 0;
  let stopReason: string | undefined;
  let lastStart = Number.NEGATIVE_INFINITY;
  const running = new Set<Promise<void>>();

  const run = async (target: Target): Promise<void> => {
    const outcome = await placeCall(connection, target);
    const line = formatOutcome(target.number, outcome);
    out(line);
    if (outcome.ok) initiated += 1;
    else {
      failures.push({ target, line });
      if (outcome.fatal) stopReason ??= outcome.reason;
    }
  };

  let started = 0;
  for (const target of targets) {
    while (running.size >= parsed.concurrency) await Promise.race(running);
    if (stopReason !== undefined) break;
    const wait = lastStart + parsed.pauseMs - Date.now();
    if (wait > 0) await sleep(wait);
    if (stopReason !== undefined) break;
    lastStart = Date.now();
    started += 1;
    const task = run(target).finally(() => running.delete(task));
    running.add(task);
  }
  await Promise.all(running);

  const skipped = targets.length - started;
  out(`${initiated} initiated, ${failures.length} failed${skipped > 0 ? `, ${skipped} not attempted` : ''}`);
  if (stopReason !== undefined && skipped > 0) out(`Stopped early: ${stopReason}`);
  if (failures.length > 0) {
    out('Failed:');
    failures.sort((a, b) => (a.target.line ?? 0) - (b.target.line ?? 0));
    for (const { target, line } of failures) out(`  line ${target.line}: ${line.replace(/^✗ /, '')}`);
  }
  return failures.length > 0 || skipped > 0 ? 1 : 0;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}


/** A token this short is a test value; replacing it would garble ordinary words. */
function redact(text: string, token: string): string {
  return token.length < 8 ? text : text.split(token).join('[redacted]');
}

function displayUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace(/\/+$/, '');
}


if (isMain(import.meta.url)) {
  endQuietlyWhenOutputCloses();
  config({ quiet: true });
  process.exitCode = await runCallCli(process.argv.slice(2), process.env, (line) => console.log(line), usageToStderr('call'));
}
