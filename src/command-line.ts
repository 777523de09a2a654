/**
 * The command line as every npm script reads it: node:util parseArgs in strict
 * mode, --help/-h on every command, and one way to refuse bad usage — exit
 * code 2 with one line on stderr that names the problem and points at --help,
 * never a stack trace.
 */
import { writeSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** A command line the command cannot run with. Its message says what is wrong in the user's terms. */
export class UsageError extends Error {}

export interface Command<O extends OptionsConfig, P extends boolean> {
  /** The npm script, as typed after `npm run`: messages point at `npm run <name> -- --help`. */
  name: string;
  usage: string;
  /** Every option but --help, which every command has. */
  options: O;
  /** Whether the command takes words other than options (a folder, a number, scenario names). */
  allowPositionals: P;
}

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

type Config<O extends OptionsConfig, P extends boolean> = { args: string[]; options: O & typeof HELP; allowPositionals: P; strict: true };
export type CommandLine<O extends OptionsConfig, P extends boolean> = ReturnType<typeof parseArgs<Config<O, P>>>;

/** Declares a command; the identity function, there to infer the option types for parseCommandLine. */
export function command<const O extends OptionsConfig, const P extends boolean>(spec: Command<O, P>): Command<O, P> {
  return spec;
}

/** The parsed command line; throws UsageError on an unknown option, a missing value or a stray word. */
export function parseCommandLine<O extends OptionsConfig, P extends boolean>(spec: Command<O, P>, argv: string[]): CommandLine<O, P> {
  const config: Config<O, P> = { args: argv, options: { ...spec.options, ...HELP }, allowPositionals: spec.allowPositionals, strict: true };
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(parseProblem(error));
  }
}

/** parseArgs' own message, without its hint about `--`: through npm that would take a second `--`, and it runs on. */
function parseProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('. To specify a positional argument')[0] ?? message;
}

export function wantsHelp(line: { values: object }): boolean {
  // The generic values type does not show `help` to the compiler; every command line has it.
  return (line.values as { help?: boolean }).help === true;
}

/**
 * For scripts that do their work at module top level: the command line as
 * `interpret` makes it, or the process ends right here, before any work —
 * 0 after printing the usage for --help, 2 when the line or `interpret`
 * finds bad usage.
 */
export function commandLineOrExit<O extends OptionsConfig, P extends boolean, T>(
  spec: Command<O, P>,
  argv: string[],
  interpret: (line: CommandLine<O, P>) => T,
): T {
  let line: CommandLine<O, P>;
  try {
    line = parseCommandLine(spec, argv);
    if (wantsHelp(line)) exitWriting(0, process.stdout.fd, `${spec.usage}\n`);
    return interpret(line);
  } catch (error) {
    if (error instanceof UsageError) exitWriting(2, process.stderr.fd, `${usageLine(spec.name, error.message)}\n`);
    throw error;
  }
}

/** The one line bad usage prints: the problem, then where to look. */
export function usageLine(name: string, message: string): string {
  // One line even when the message quotes a multi-line error (a CSV parser's, say).
  const problem = message.replace(/\s*\n\s*/g, ' ').trim().replace(/\.$/, '');
  return `${name}: ${problem}. See \`npm run ${name} -- --help\`.`;
}

/** Where commands with an in-process API send bad usage when run as scripts: one line on stderr. */
export function usageToStderr(name: string): (message: string) => void {
  return (message) => process.stderr.write(`${usageLine(name, message)}\n`);
}

export interface NumberRule {
  /** The smallest value allowed (default 0). */
  min?: number;
  /** Refuse `min` itself: for rates and factors that must be above 0. */
  aboveMin?: boolean;
  /** Counts, ports, milliseconds given as whole numbers. */
  integer?: boolean;
}

/** `raw` as a number, `fallback` when the option was not given; UsageError when it is not a number the rule allows. */
export function numberOption(flag: string, raw: string | undefined, fallback: number, rule: NumberRule = {}): number {
  if (raw === undefined) return fallback;
  const { min = 0, aboveMin = false, integer = false } = rule;
  const value = Number(raw);
  // Number('') and Number(' ') are 0: an empty value is a mistake, not zero.
  const fits = raw.trim() !== '' && Number.isFinite(value) && (integer ? Number.isInteger(value) : true) && (aboveMin ? value > min : value >= min);
  if (fits) return value;
  const kind = integer ? 'a whole number' : 'a number';
  throw new UsageError(`${flag} must be ${kind} ${aboveMin ? 'above' : 'of at least'} ${min}, not "${raw}".`);
}

/** Writes synchronously, so nothing is lost to process.exit, then exits; a reader already gone changes nothing. */
function exitWriting(code: number, fd: number, text: string): never {
  try {
    writeSync(fd, text);
  } catch (error) {
    if (!isClosedOutput(error)) throw error;
  }
  process.exit(code);
}

/**
 * For a script whose output may go to a reader that stops early (`| head -2`,
 * a pager quit): once stdout is closed nothing more can be shown, so the
 * script ends quietly with exit code 0 instead of dying of an EPIPE stack
 * trace. By default at once; `end` lets a script finish properly first (the
 * simulator hangs up its call) — it then sets the exit code itself.
 */
export function endQuietlyWhenOutputCloses(end: () => void = () => process.exit(0)): void {
  let closed = false;
  process.stdout.on('error', (error) => {
    if (!isClosedOutput(error)) throw error;
    if (closed) return;
    closed = true;
    end();
  });
}

function isClosedOutput(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EPIPE';
}
