/**
 * Idle calls held open from a child process, so that the memory per idle
 * call measured in the bench's process is Hotline's alone, not the client
 * half of each connection. Forked by capacity.ts; speaks over IPC:
 *   → { type: 'ready', open }        once every call is greeted
 *   ← { type: 'end', count }         end that many calls (session_end + close)
 *   → { type: 'ended', open }
 * and exits when the parent disconnects.
 */
import { openCallers, type Caller } from './ws-callers.js';

type Command = { type: 'end'; count: number };

async function main(): Promise<void> {
  const [url, countText, rateText] = process.argv.slice(2);
  if (!url || !countText || !rateText) throw new Error('usage: idle-callers <ws url> <count> <per second>');
  const send = (message: object): void => {
    process.send?.(message);
  };
  const callers: Caller[] = await openCallers(url, Number(countText), Number(rateText), `idle-${process.pid}`, {
    msPerChar: 1,
    onSpeak: () => undefined,
  });
  send({ type: 'ready', open: callers.length });
  process.on('message', (command: Command) => {
    if (command.type !== 'end') return;
    const ending = callers.splice(0, command.count);
    void Promise.all(ending.map((caller) => caller.end())).then(() => send({ type: 'ended', open: callers.length }));
  });
  // The parent owns the lifetime: when it goes, so do the calls.
  process.on('disconnect', () => process.exit(0));
}

if (process.send) {
  main().catch((error: unknown) => {
    process.send?.({ type: 'error', message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
}
