/**
 * The bench's handle on the far side of the network phase's link (far-side-main.ts): starts it as
 * a process of its own, through the link's command prefix (`ip netns exec …` puts it inside the
 * namespace), and keeps what it reports of every request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { clockOffset } from './clock.js';
import { stopChild } from './stop-child.js';
import { FAR_SIDE_CONFIG_VARIABLE, type BusinessRequestRecord, type FarSideConfig, type FarSideMessage, type ModelRequestRecord } from './far-side-messages.js';

/** From source the entry is TypeScript and needs tsx's loader; built, it is plain JavaScript beside this file. */
const fromSource = import.meta.url.endsWith('.ts');
const ENTRY = fileURLToPath(new URL(`far-side-main.${fromSource ? 'ts' : 'js'}`, import.meta.url));
const NODE_ARGS = fromSource ? ['--import', import.meta.resolve('tsx'), ENTRY] : [ENTRY];

/** Enough of the bench's environment to run node, and nothing that configures anything else. */
const PASSED_ON = ['PATH', 'HOME', 'TMPDIR', 'LANG'];
const START_TIMEOUT_MS = 30_000;
/**
 * The far side stands in for other hosts, whose timers keep time whatever runs on this machine:
 * it starts ahead of everything else (as the workers phase's LLM server runs ahead of Hotline),
 * where that is allowed (root); elsewhere `nice` warns and runs it at the usual priority.
 */
const FAR_SIDE_NICE = -10;
const STOP_TIMEOUT_MS = 5_000;

/** The far side did not start, or stopped while starting; the message ends with its stderr. */
export class FarSideError extends Error {
  override readonly name = 'FarSideError';
}

export class FarSide {
  readonly modelRequests: ModelRequestRecord[] = [];
  readonly businessRequests: BusinessRequestRecord[] = [];

  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
    readonly modelPort: number,
    readonly businessPort: number,
    /** Its time + shift = the bench's time. */
    readonly shift: number,
    /** The nice value it runs at (undefined where it cannot be read). */
    readonly nice: number | undefined,
  ) {
    child.on('message', (message: FarSideMessage) => {
      if (message.kind === 'model') this.modelRequests.push(message);
      else if (message.kind === 'business') this.businessRequests.push(message);
    });
  }

  /** The process's id, for a cleanup that cannot wait (a signal). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** `prefix`: the command the far side runs under, e.g. ['ip', 'netns', 'exec', name]; empty to run it directly. */
  static async start(config: FarSideConfig, prefix: readonly string[]): Promise<FarSide> {
    const env: Record<string, string> = {};
    for (const name of PASSED_ON) if (process.env[name] !== undefined) env[name] = process.env[name];
    env[FAR_SIDE_CONFIG_VARIABLE] = JSON.stringify(config);
    const [command, ...args] = [...prefix, 'nice', '-n', String(FAR_SIDE_NICE), process.execPath, ...NODE_ARGS];
    const child = spawn(command ?? process.execPath, args, { env, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (piece: string) => (stderr = `${stderr}${piece}`.slice(-4000)));
    // 'close', not 'exit': by then the IPC channel is closed too, so every report sent before has been read.
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    try {
      const ready = await Promise.race([
        new Promise<Extract<FarSideMessage, { kind: 'ready' }>>((resolve) => {
          child.on('message', function awaitReady(message: FarSideMessage) {
            if (message.kind !== 'ready') return;
            child.off('message', awaitReady);
            resolve(message);
          });
        }),
        new Promise<never>((_, reject) => {
          child.once('error', reject);
          void exited.then(() => reject(new FarSideError(`the far side (${command}) exited with ${child.exitCode ?? child.signalCode} while starting:\n${stderr}`)));
          timer = setTimeout(() => reject(new FarSideError(`the far side was not ready after ${START_TIMEOUT_MS / 1000} s:\n${stderr}`)), START_TIMEOUT_MS);
        }),
      ]);
      return new FarSide(child, exited, ready.modelPort, ready.businessPort, clockOffset() - ready.clockOffset, ready.nice);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGTERM; SIGKILL if it has not exited in time. */
  async close(): Promise<void> {
    // Gone by itself too: its last reports are read once its channel has closed.
    await stopChild(this.child, this.exited, STOP_TIMEOUT_MS);
  }
}
