import type { ChildProcess } from 'node:child_process';

/** SIGTERM, as a service manager stops a process; SIGKILL if it has not exited within `timeoutMs`. Resolves once it has exited. */
export async function stopChild(child: ChildProcess, exited: Promise<unknown>, timeoutMs: number): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }
  await exited;
}
