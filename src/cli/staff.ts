/**
 * Staff accounts for the dashboard from the command line: each person signs in with their own
 * name, so the audit log says who did what.
 *
 *   npm run staff -- add --name <n> --role <r> [--generate] | reset --name <n> [--generate]
 *                  | role --name <n> --role <r> | remove --name <n> | list
 */
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { ReadStream } from 'node:tty';
import { config as loadDotenv } from 'dotenv';
import { pino } from 'pino';
import { command, endQuietlyWhenOutputCloses, parseCommandLine, UsageError, usageLine, wantsHelp } from '../command-line.js';
import { loadConfig } from '../config.js';
import { ConfigError } from '../errors.js';
import { AuditLog } from '../privacy/audit-log.js';
import { MIN_PASSWORD_LENGTH, passwordProblem } from '../staff/passwords.js';
import { isStaffRole, normaliseStaffName, STAFF_ROLES, StaffError, staffNameProblem, StaffRepository, type StaffMember, type StaffRole } from '../store/staff-repository.js';
import { openStore, type Store } from '../store/store.js';
import { isMain } from './is-main.js';

export const USAGE = `Usage: npm run staff -- <command> [options]

The people who sign in to the dashboard, each with a name and password of their own, so the audit
log says who did what. The store is Hotline's: SQLite (DATABASE_FILE, the default) or PostgreSQL
(DATABASE_URL), from the shell's environment, then a .env file in the working directory.

Commands:
  add --name <n> --role <r>    a new account; the password is the first line of standard input
  reset --name <n>             a new password for the account, from standard input
  role --name <n> --role <r>   changes the account's role
  remove --name <n>            removes the account (what it did stays in the audit log)
  list                         every account with its role, never a password

Options:
  --name <n>       1 to 64 letters (a-z), digits and . _ - @; Anna and anna are one account
  --role <r>       ${STAFF_ROLES.join(', ')}: a viewer reads the history with numbers masked; an
                   operator also watches live calls, hands them over or ends them; an admin also
                   runs campaigns, answers access and erasure requests and reads the audit log
  --generate       with add or reset: makes a random password instead of reading one, and prints it
                   once (default: read the password from standard input; typed unseen at a terminal)

A password is at least ${MIN_PASSWORD_LENGTH} characters long. Each change is recorded in the audit log as done by
"cli:<your user name>".

Example:
  npm run staff -- add --name anna --role operator --generate
  printf '%s\\n' "$NEW_PASSWORD" | npm run staff -- reset --name anna
  npm run staff -- list`;

const STAFF = command({
  name: 'staff',
  usage: USAGE,
  allowPositionals: true,
  options: { name: { type: 'string' }, role: { type: 'string' }, generate: { type: 'boolean' } },
});

const COMMANDS = ['add', 'reset', 'role', 'remove', 'list'] as const;
type StaffCommand = (typeof COMMANDS)[number];

interface Io {
  readonly stdout: Writable;
  readonly stderr: { write(text: string): boolean };
  readonly stdin: Readable;
}

type Request =
  | { readonly which: 'add'; readonly name: string; readonly role: StaffRole; readonly generate: boolean }
  | { readonly which: 'reset'; readonly name: string; readonly generate: boolean }
  | { readonly which: 'role'; readonly name: string; readonly role: StaffRole }
  | { readonly which: 'remove'; readonly name: string }
  | { readonly which: 'list' };

interface Password {
  readonly text: string;
  /** Made here, so shown once; a password given is never echoed. */
  readonly generated: boolean;
}

/** A request with its password, once read. */
type Job =
  | Exclude<Request, { which: 'add' | 'reset' }>
  | (Omit<Extract<Request, { which: 'add' }>, 'generate'> & { readonly password: Password })
  | (Omit<Extract<Request, { which: 'reset' }>, 'generate'> & { readonly password: Password });

/** Typing stopped with Ctrl-C or Ctrl-D at the password prompt. */
class Cancelled extends Error {}

/** Runs the command line; the exit code. */
export async function runStaffCli(argv: string[], env: Record<string, string | undefined>, io: Io): Promise<number> {
  let request: Job;
  try {
    const line = parseCommandLine(STAFF, argv);
    if (wantsHelp(line)) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    // The password before the store is opened: one that will be refused should not wait for a database.
    request = await withPassword(requestOf(line.positionals, line.values), io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${usageLine('staff', error.message)}\n`);
      return 2;
    }
    if (error instanceof Cancelled) {
      io.stderr.write('staff: cancelled, nothing was changed\n');
      return 1;
    }
    throw error;
  }

  const logger = pino({ level: 'warn' }, process.stderr);
  let store: Store;
  try {
    const config = loadConfig(env);
    store = await openStore({ databaseFile: config.databaseFile, databaseUrl: config.databaseUrl }, logger);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`staff ${request.which}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const staff = new StaffRepository(store.db);
  const audit = new AuditLog(store.db, logger);
  const actor = `cli:${safeUserName()}`;
  try {
    switch (request.which) {
      case 'add': {
        await staff.add(request.name, request.role, request.password.text);
        await audit.record({ actor, role: 'admin', action: 'staff_add', detail: { staff: request.name, role: request.role } });
        io.stdout.write(`added ${request.name} (${request.role})\n${handOver(request.name, request.password)}`);
        return 0;
      }
      case 'reset': {
        await staff.resetPassword(request.name, request.password.text);
        await audit.record({ actor, role: 'admin', action: 'staff_reset', detail: { staff: request.name } });
        io.stdout.write(`new password for ${request.name}\n${handOver(request.name, request.password)}`);
        return 0;
      }
      case 'role': {
        await staff.setRole(request.name, request.role);
        await audit.record({ actor, role: 'admin', action: 'staff_role', detail: { staff: request.name, role: request.role } });
        io.stdout.write(`${request.name} is ${request.role} now\n`);
        return 0;
      }
      case 'remove': {
        await staff.remove(request.name);
        await audit.record({ actor, role: 'admin', action: 'staff_remove', detail: { staff: request.name } });
        io.stdout.write(`removed ${request.name}\n`);
        return 0;
      }
      case 'list':
        io.stdout.write(table(await staff.list()));
        return 0;
    }
  } catch (error) {
    if (error instanceof StaffError) {
      io.stderr.write(`staff ${request.which}: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

function requestOf(positionals: string[], values: { name?: string | undefined; role?: string | undefined; generate?: boolean | undefined }): Request {
  const [first, ...rest] = positionals;
  if (first === undefined) throw new UsageError(`say what to do: ${COMMANDS.join(', ')}`);
  if (!(COMMANDS as readonly string[]).includes(first)) throw new UsageError(`unknown command "${first}": use ${COMMANDS.join(', ')}`);
  if (rest.length > 0) throw new UsageError(`unexpected "${rest[0]}" after ${first}`);
  const which = first as StaffCommand;
  const generate = values.generate ?? false;
  if (generate && which !== 'add' && which !== 'reset') throw new UsageError('--generate goes with add and reset');
  if (values.role !== undefined && which !== 'add' && which !== 'role') throw new UsageError('--role goes with add and role');
  if (which === 'list') {
    if (values.name !== undefined) throw new UsageError('list takes no --name');
    return { which };
  }
  if (values.name === undefined) throw new UsageError(`${which} needs --name, the account's name`);
  const problem = staffNameProblem(values.name);
  if (problem) throw new UsageError(`--name "${values.name}": ${problem}`);
  const name = normaliseStaffName(values.name);
  if (which === 'reset') return { which, name, generate };
  if (which === 'remove') return { which, name };
  if (values.role === undefined) throw new UsageError(`${which} needs --role: ${STAFF_ROLES.join(', ')}`);
  if (!isStaffRole(values.role)) throw new UsageError(`--role must be one of ${STAFF_ROLES.join(', ')}, not "${values.role}"`);
  return which === 'add' ? { which, name, role: values.role, generate } : { which, name, role: values.role };
}

async function withPassword(request: Request, io: Io): Promise<Job> {
  if (request.which !== 'add' && request.which !== 'reset') return request;
  const { generate, ...rest } = request;
  return { ...rest, password: await passwordFor(request.name, generate, io) };
}

/** The password to set: made here, typed unseen at a terminal, or the first line of piped input. */
async function passwordFor(name: string, generate: boolean, io: Io): Promise<Password> {
  // 18 random bytes are 144 bits, and exactly 24 base64url characters (no padding to copy by mistake).
  if (generate) return { text: randomBytes(18).toString('base64url'), generated: true };
  if (io.stdin instanceof ReadStream && io.stdin.isTTY) {
    const [typed = '', again] = await hiddenLines(io.stdin, io.stderr, [`Password for ${name}: `, 'The same again: ']);
    const weak = passwordProblem(typed);
    if (weak) throw new UsageError(weak);
    // Unseen, a typo would go unnoticed: it has to be typed twice alike.
    if (again !== typed) throw new UsageError('the two passwords typed differ');
    return { text: typed, generated: false };
  }
  const text = await firstLine(io.stdin);
  if (text === undefined || text === '') throw new UsageError('no password on standard input: give it as its first line, or use --generate');
  const weak = passwordProblem(text);
  if (weak) throw new UsageError(weak);
  return { text, generated: false };
}

/** The first line of the input, without its line end; undefined when the input ends empty. */
async function firstLine(input: Readable): Promise<string | undefined> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  // Leaving the loop early destroys the input: only the first line is ours, and nothing reads on.
  for await (const chunk of input as AsyncIterable<string | Buffer>) {
    text += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    const end = text.indexOf('\n');
    if (end >= 0) return text.slice(0, end).replace(/\r$/, '');
  }
  text += decoder.end();
  return text === '' ? undefined : text.replace(/\r$/, '');
}

/**
 * Asks each question in turn at the terminal and reads the answers without showing them (raw
 * mode: no echo, so we see every key — Enter, Backspace, and Ctrl-C, which raw mode no longer
 * turns into a signal). One reader for all the answers: keys typed ahead, or a paste of two
 * lines, arrive in one piece and belong to the next answer, not to nobody.
 */
function hiddenLines(input: ReadStream, stderr: Io['stderr'], questions: readonly string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const answers: string[] = [];
    let typed: string[] = [];
    const stop = (): void => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
    };
    const onData = (piece: string): void => {
      for (const key of piece) {
        if (key === '\u0003' || key === '\u0004') {
          stop();
          stderr.write('\n');
          return reject(new Cancelled());
        }
        if (key === '\r' || key === '\n') {
          answers.push(typed.join(''));
          typed = [];
          stderr.write('\n');
          if (answers.length === questions.length) {
            stop();
            return resolve(answers);
          }
          stderr.write(questions[answers.length] ?? '');
        } else if (key === '\u007f' || key === '\b') typed = typed.slice(0, -1);
        else if (key >= ' ') typed.push(key);
      }
    };
    stderr.write(questions[0] ?? '');
    input.setRawMode(true);
    input.setEncoding('utf8');
    input.on('data', onData);
    input.resume();
  });
}

/** A generated password is shown this once: it is stored only as a hash. */
function handOver(name: string, password: Password): string {
  if (!password.generated) return '';
  return (
    `password for ${name}: ${password.text}\n` +
    `It is shown only this once. Hand it to ${name} safely (in person, or shared through a password manager), not by e-mail or chat.\n`
  );
}

function table(members: readonly StaffMember[]): string {
  if (members.length === 0) return 'no staff accounts yet: npm run staff -- add --name <n> --role admin\n';
  const header = ['name', 'role', 'created', 'updated'];
  const rows = [header, ...members.map((m) => [m.name, m.role, shortTime(m.createdAt), shortTime(m.updatedAt)])];
  const widths = header.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd()).join('\n') + '\n';
}

/** To the second, in UTC: milliseconds only make a table wider. */
function shortTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

if (isMain(import.meta.url)) {
  loadDotenv({ quiet: true });
  endQuietlyWhenOutputCloses();
  runStaffCli(process.argv.slice(2), process.env, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`staff failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
