import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on now: for a server a test starts on a port it must
 * know in advance, or for an address whose connections are refused.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
