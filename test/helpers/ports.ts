import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Where the system picks ports for port 0 and for every outgoing connection (Linux's
 * ip_local_port_range). A port found free there can be taken by any connection a moment later —
 * the tests make thousands — before the server meant for it listens: so free ports are picked below it.
 */
function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low !== undefined && Number.isInteger(low) && low > 12_000) return low;
  } catch {
    // Not Linux: the usual start of the range (IANA's dynamic ports).
  }
  return 49_152;
}

const FIRST = 10_000;
const LAST = ephemeralStart() - 1;

function listensOn(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port on 127.0.0.1 that nothing listens on now: for a server a test starts on a port it must
 * know in advance, or for an address whose connections are refused. Picked at random below the
 * system's ephemeral range, so that neither another test's port 0 nor an outgoing connection takes it.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST));
    if (await listensOn(port)) return port;
  }
  throw new Error(`no free port found between ${FIRST} and ${LAST}`);
}
