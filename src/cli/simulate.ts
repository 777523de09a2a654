/**
 * Plays the voice service against a running Hotline, with you as the caller.
 *
 *   npm run simulate -- [--url ws://localhost:3000/ws | --webhook <url>] [--outbound] [--json call.json] …
 *   npm run simulate -- --platform --port 4000 --url ws://localhost:3000/ws   (the outbound API, ringing Hotline back)
 *
 * Each line typed is what the caller says; /dtmf <keys>, /silence, /bargein [words] and /hangup
 * are commands. See USAGE in src/simulator/options.ts for every option.
 */
import { isMain } from './is-main.js';
import { config } from 'dotenv';
import { LineSource } from '../simulator/line-source.js';
import { parseSettings, UsageError, USAGE, type PlatformSettings } from '../simulator/options.js';
import { endQuietlyWhenOutputCloses, usageToStderr } from '../command-line.js';
import { startPlatformEmulator } from '../simulator/platform-emulator.js';
import { runCall } from '../simulator/run-call.js';

export interface SimulateIo {
  input: NodeJS.ReadableStream;
  output: (line: string) => void;
  /** Aborting it hangs up the call in progress and ends the run (Ctrl-C). */
  signal?: AbortSignal;
  /** Where bad usage goes; by default to `output` with the usage. The script sends one line to stderr. */
  reportUsage?: (message: string) => void;
}

/** Runs the command line; returns the exit code: 0 the call ended normally, 1 refused or unreachable, 2 bad usage. */
export async function runSimulate(argv: string[], env: Record<string, string | undefined>, io: SimulateIo): Promise<number> {
  let settings;
  try {
    settings = parseSettings(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (io.reportUsage) io.reportUsage(error.message);
    else io.output(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (settings.mode === 'help') {
    io.output(USAGE);
    return 0;
  }
  const interactive = (io.input as { isTTY?: boolean }).isTTY === true;
  if (settings.mode === 'platform') return runPlatform(settings, io, interactive);

  const lines = new LineSource(io.input);
  try {
    return await runCall(
      {
        target: settings.target,
        direction: settings.direction,
        from: settings.from,
        to: settings.to,
        voice: settings.voice,
        interactive,
        ...(settings.jsonFile === undefined ? {} : { jsonFile: settings.jsonFile }),
        ...(io.signal === undefined ? {} : { signal: io.signal }),
      },
      lines,
      io.output,
    );
  } finally {
    lines.close();
  }
}

async function runPlatform(settings: PlatformSettings, io: SimulateIo, interactive: boolean): Promise<number> {
  const { target } = settings;
  let emulator;
  try {
    emulator = await startPlatformEmulator({
      port: settings.port,
      host: settings.host,
      hotlineUrl: target.url,
      ring:
        target.kind === 'webhook'
          ? { kind: 'webhook', ...(target.secret === undefined ? {} : { secret: target.secret }) }
          : { kind: 'websocket', ...(target.token === undefined ? {} : { token: target.token }) },
      ...(settings.platformToken === undefined ? {} : { platformToken: settings.platformToken }),
      flowNumber: settings.flowNumber,
      flowsWithoutNumber: settings.flowsWithoutNumber,
      unknownFlows: settings.unknownFlows,
      answers: settings.answers,
      ...(settings.mailboxGreeting === undefined ? {} : { mailboxGreeting: settings.mailboxGreeting }),
      ...(settings.personScript === undefined ? {} : { personScript: settings.personScript }),
      voice: settings.voice,
      input: io.input,
      output: io.output,
      interactive,
    });
  } catch (error) {
    io.output(`✗ cannot listen on ${settings.host}:${settings.port}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  io.output(`placed calls ring Hotline at ${target.url} (${target.kind})`);
  const stop = () => void emulator.close();
  io.signal?.addEventListener('abort', stop, { once: true });
  const code = await emulator.done;
  io.signal?.removeEventListener('abort', stop);
  await emulator.close();
  return code;
}


if (isMain(import.meta.url)) {
  config({ quiet: true });
  const interrupted = new AbortController();
  // Nobody reads any more (`| head -2`): the call is hung up properly, as for Ctrl-C, and the run ends with 0.
  let outputClosed = false;
  endQuietlyWhenOutputCloses(() => {
    outputClosed = true;
    interrupted.abort();
  });
  // The first Ctrl-C hangs up properly (session_end reaches Hotline); a second one quits at once.
  process.once('SIGINT', () => {
    interrupted.abort();
    process.once('SIGINT', () => process.exit(130));
  });
  const code = await runSimulate(process.argv.slice(2), process.env, {
    input: process.stdin,
    output: (line) => {
      if (!outputClosed) console.log(line);
    },
    signal: interrupted.signal,
    reportUsage: usageToStderr('simulate'),
  });
  process.exitCode = outputClosed ? 0 : code;
}
