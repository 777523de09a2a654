/**
 * The shop the shipped example tools (prompts/tools/order_status.yaml,
 * book_callback.yaml) call when Hotline runs on its demo model and no
 * SHOP_API_URL is set: a few made-up orders on loopback, so the examples
 * work out of the box.
 *
 *   GET  /orders/:number   the order as JSON, or 404 { error: "no order with that number" }
 *   POST /callbacks        books a callback (nothing is kept: the fake stores no phone numbers)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoShop {
  /** http://127.0.0.1:PORT, without a trailing slash: what SHOP_API_URL is set to. */
  readonly url: string;
  close(): Promise<void>;
}

export interface DemoOrder {
  readonly number: string;
  readonly status: 'shipped' | 'packing' | 'delivered';
  readonly items: number;
  /** Relative words, not dates: the demo has no clock to keep in step with. */
  readonly expected_delivery?: string;
  readonly delivered?: string;
  readonly carrier?: string;
}

/** The orders the demo knows; every other number is not found. */
export const DEMO_ORDERS: Readonly<Record<string, DemoOrder>> = Object.freeze({
  '4711': { number: '4711', status: 'shipped', items: 2, carrier: 'Parcel Express', expected_delivery: 'tomorrow' },
  '1234': { number: '1234', status: 'packing', items: 1, expected_delivery: 'in two to three days' },
  '42': { number: '42', status: 'delivered', items: 3, delivered: 'yesterday' },
});

export const NOT_FOUND = 'no order with that number';

/**
 * Long enough that the caller hears the tool's hold line (TOOL_HOLD_MS is
 * 500 by default), short enough not to bore anyone trying the demo.
 */
const DEFAULT_DELAY_MS = 1200;
/** A callback request is a few short fields; anything much bigger is not one. */
const MAX_BODY_BYTES = 16 * 1024;

export async function startDemoShop(options: { delayMs?: number } = {}): Promise<DemoShop> {
  const delayMs = options.delayMs ?? DEFAULT_DELAY_MS;
  // Answers still waiting out their delay: cleared on close, so no timer outlives the shop.
  const pending = new Set<NodeJS.Timeout>();
  let callbacks = 0;

  function later(res: ServerResponse, answer: () => void): void {
    const timer = setTimeout(() => {
      pending.delete(timer);
      answer();
    }, delayMs);
    pending.add(timer);
    // A caller that gave up (the tool timed out, the call ended) needs no answer.
    res.on('close', () => {
      clearTimeout(timer);
      pending.delete(timer);
    });
  }

  const server = createServer(function demoShop(req: IncomingMessage, res: ServerResponse) {
    const { pathname } = new URL(req.url ?? '/', 'http://shop.invalid');
    const order = /^\/orders\/([^/]+)\/?$/.exec(pathname);
    if (order && req.method === 'GET') {
      const found = DEMO_ORDERS[decodeURIComponent(order[1] ?? '')];
      later(res, () => (found ? json(res, 200, { order: found }) : json(res, 404, { error: NOT_FOUND })));
      return;
    }
    if (pathname === '/callbacks' && req.method === 'POST') {
      void readBody(req).then((body) => {
        if (body === undefined) return json(res, 413, { error: 'request too large' });
        if (!isCallbackRequest(body)) return json(res, 400, { error: 'send JSON with a topic' });
        callbacks += 1;
        const booked = { callback: { id: `CB-${1000 + callbacks}`, status: 'booked', when: 'within the next hour' } };
        later(res, () => json(res, 201, booked));
      });
      return;
    }
    const known = order !== null || pathname === '/callbacks';
    json(res, known ? 405 : 404, { error: known ? 'method not allowed' : 'not found' });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The parsed JSON body, null if it is no JSON, undefined if it is too large. */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return undefined;
      chunks.push(chunk);
    }
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

function isCallbackRequest(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'topic' in body && typeof body.topic === 'string' && body.topic.trim() !== '';
}
