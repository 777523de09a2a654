import { randomUUID } from 'node:crypto';
import type { HotlineTarget } from './options.js';
import { formatWarning } from './output.js';
import { openTransport } from './run-call.js';

export interface BusyLine {
  target: HotlineTarget;
  /** The AI flow's number: the caller ID. */
  from: string;
  /** The number that was busy. */
  to: string;
}

/**
 * The line was busy: Hotline is never rung, and learns of it only from a
 * session_end with reason "busy" for a session it never saw.
 *
 * The emulator's choice: what the production service sends for a busy line
 * is undocumented (perhaps nothing at all). The session carries the numbers
 * and the direction of a session_start, so Hotline could tell which of its
 * placed calls it was. Returns the session id sent, or undefined when Hotline
 * could not be reached.
 */
export async function reportBusy(line: BusyLine, output: (line: string) => void): Promise<string | undefined> {
  const sessionId = randomUUID();
  let transport;
  try {
    transport = await openTransport(line.target);
  } catch (error) {
    output(formatWarning(`could not tell Hotline the line was busy: ${error instanceof Error ? error.message : String(error)}`));
    return undefined;
  }
  // A webhook answer to it (there should be none) has nobody to play it.
  transport.listen({ action: () => undefined, lost: () => undefined, warning: (message) => output(formatWarning(message)) });
  try {
    await transport.send({
      type: 'session_end',
      reason: 'busy',
      session: {
        id: sessionId,
        account_id: 'simulator',
        phone_number: line.from,
        direction: 'outbound',
        from_phone_number: line.from,
        to_phone_number: line.to,
      },
    });
    output(`session_end (reason "busy") sent for session ${sessionId}, which Hotline never saw start`);
    return sessionId;
  } catch (error) {
    output(formatWarning(`Hotline did not take the busy session_end: ${error instanceof Error ? error.message : String(error)}`));
    return sessionId;
  } finally {
    await transport.close().catch(() => undefined);
  }
}
