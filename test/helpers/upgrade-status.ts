import { WebSocket } from 'ws';

/** The HTTP status a WebSocket upgrade gets: 101 when it opens, else the refusal's status. `localAddress`: the source address it comes from. */
export function upgradeStatus(url: string, headers: Record<string, string> = {}, options: { localAddress?: string } = {}): Promise<number> {
  const ws = new WebSocket(url, { headers, ...options });
  return new Promise((resolve, reject) => {
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', reject);
  });
}
