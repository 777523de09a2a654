/**
 * One of the bench's worker modules (the scripted LLM server, the floor) on a thread of a process
 * of its own, for the outside phase: the model and the floor run apart from the callers' process
 * as they run on other hosts, and nothing of theirs shares an event loop, a heap or a garbage
 * collector with the callers. The child's main thread only relays messages between its worker and
 * this process, over the IPC channel with structured clone, so the module runs unchanged and this
 * handle answers as a Worker does (message, error, exit; postMessage, terminate).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { stopChild } from './stop-child.js';
import type { RelayCommand, RelayMessage } from './thread-process-main.js';

/** From source the entry is TypeScript and needs tsx's loader; built, it is plain JavaScript beside this file. */
const fromSource = import.meta.url.endsWith('.ts');
const ENTRY = fileURLToPath(new URL(`thread-process-main.${fromSource ? 'ts' : 'js'}`, import.meta.url));

/** Enough of the bench's environment to run node, and nothing that configures anything else. */
const PASSED_ON = ['PATH', 'HOME', 'TMPDIR', 'LANG'];
const STOP_TIMEOUT_MS = 5_000;

/** What the bench uses of a worker thread, answered alike by a thread here and by one in a process of its own. */
export type WorkerLike = EventEmitter & {
  postMessage(message: unknown): void;
  terminate(): Promise<unknown>;
};

export class ThreadProcess extends EventEmitter {
  readonly pid: number | undefined;
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    super();
    this.pid = child.pid;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.on('message', (message: RelayMessage) => {
      if (message.relay === 'message') this.emit('message', message.message);
      else this.emit('error', new Error(`${message.error} (in process ${child.pid})`));
    });
    child.once('exit', (code, signal) => this.emit('exit', code ?? (signal ? 1 : 0)));
    child.on('error', (error) => this.emit('error', error));
  }

  /** Starts `module` (a base name beside this file, as spawnWorker takes it) on a thread of a new process. */
  static spawn(module: string, workerData: unknown): ThreadProcess {
    const env: NodeJS.ProcessEnv = {};
    for (const name of PASSED_ON) if (process.env[name] !== undefined) env[name] = process.env[name];
    const child = fork(ENTRY, [], {
      env,
      execArgv: fromSource ? ['--import', import.meta.resolve('tsx')] : [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const started = new ThreadProcess(child);
    const command: RelayCommand = { relay: 'start', module, workerData };
    child.send(command);
    return started;
  }

  postMessage(message: unknown): void {
    const command: RelayCommand = { relay: 'message', message };
    if (this.child.connected) this.child.send(command);
  }

  async terminate(): Promise<void> {
    await stopChild(this.child, this.exited, STOP_TIMEOUT_MS);
  }
}
