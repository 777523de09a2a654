/**
 * The child side of thread-process.ts: starts the module it is told on a worker thread and relays
 * between that thread and the parent. The relay does no work of its own between messages, so the
 * process's CPU is the module's.
 */
import { spawnWorker } from './spawn-worker.js';

export type RelayCommand = { relay: 'start'; module: string; workerData: unknown } | { relay: 'message'; message: unknown };
export type RelayMessage = { relay: 'message'; message: unknown } | { relay: 'error'; error: string };

function send(message: RelayMessage): void {
  if (process.connected) process.send?.(message);
}

if (process.send) {
  let post: ((message: unknown) => void) | undefined;
  const early: unknown[] = [];
  process.on('message', (command: RelayCommand) => {
    if (command.relay === 'message') {
      if (post) post(command.message);
      else early.push(command.message);
      return;
    }
    if (post) return;
    const worker = spawnWorker(command.module, command.workerData);
    worker.on('message', (message: unknown) => send({ relay: 'message', message }));
    worker.on('error', (error) => send({ relay: 'error', error: error instanceof Error ? error.message : String(error) }));
    worker.on('exit', (code) => process.exit(code));
    post = (message) => worker.postMessage(message);
    for (const message of early.splice(0)) post(message);
  });
  // The parent gone: so is this process (its worker with it).
  process.on('disconnect', () => process.exit(0));
}
