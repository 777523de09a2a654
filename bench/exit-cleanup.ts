/**
 * What must not outlive the bench even when it is stopped by a signal (Ctrl-C) or dies: a network
 * namespace, a child process in it. The phase's own try/finally cleans up on every ordinary
 * path; these run only when the process goes down before it could, synchronously, as nothing
 * asynchronous runs any more then. The signal handlers are there only while a cleanup is
 * registered, so the process keeps its default behaviour outside the phase.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';

type Cleanup = () => void;

const cleanups = new Set<Cleanup>();
const SIGNALS = [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const;

function runAll(): void {
  for (const cleanup of [...cleanups].reverse()) {
    cleanups.delete(cleanup);
    try {
      cleanup();
    } catch {
      // Each cleanup is worth trying whatever the one before it did.
    }
  }
}

const handlers = SIGNALS.map(([signal, code]) => ({
  signal,
  handler: (): void => {
    process.stderr.write(`bench: ${signal}, cleaning up\n`);
    runAll();
    process.exit(code);
  },
}));

function install(): void {
  for (const { signal, handler } of handlers) process.on(signal, handler);
  process.on('exit', runAll);
}

function uninstall(): void {
  for (const { signal, handler } of handlers) process.off(signal, handler);
  process.off('exit', runAll);
}

/** Runs `cleanup` if the process goes down first; the function returned forgets it (the phase cleaned up itself). */
export function cleanUpOnExit(cleanup: Cleanup): () => void {
  if (cleanups.size === 0) install();
  cleanups.add(cleanup);
  return () => {
    if (cleanups.delete(cleanup) && cleanups.size === 0) uninstall();
  };
}

/** A command run to completion from a cleanup, its failure ignored: at exit there is nobody left to tell. */
export function runQuietly(command: string, args: readonly string[]): void {
  spawnSync(command, args, { stdio: 'ignore', timeout: 5_000 });
}

/** A folder of the bench's, removed however far it got. */
export function removeQuietly(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** SIGKILL to a process that may be gone already. */
export function killQuietly(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
