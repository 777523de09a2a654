/**
 * The live calls of every replica on every replica's dashboard: each replica tells the others of
 * its calls' changes over PostgreSQL's LISTEN/NOTIFY, batched as the dashboard batches them, and
 * shows theirs beside its own. A newcomer says hello and the others send what they have; a replica
 * that dies has its calls dropped at the next heartbeat.
 */
import pg from 'pg';
import { z } from 'zod';
import { CALL_PHASES, type CallActivity, type CallActivityObserver } from '../call/ports/call-activity.js';
import type { Logger } from '../logger.js';
import { keepWords, type Redact } from '../call/ports/redaction.js';
import type { ReplicaRegistry } from './replica-registry.js';

const CHANNEL = 'hotline_live';
/** Changes are sent at most this often: a call's burst of sentences becomes one message. */
const FLUSH_MS = 250;
/** PostgreSQL takes a notification of less than 8,000 bytes: each message stays under this. */
const MESSAGE_MAX_BYTES = 7_500;
/** What a relayed call's latest words keep: enough for the live list, and the message stays small. */
const WORDS_MAX = 200;
const RECONNECT_MS = 1_000;

const Activity = z.object({
  sessionId: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  from: z.string().optional(),
  to: z.string().optional(),
  startedAt: z.string(),
  phase: z.enum(CALL_PHASES),
  callerSaid: z.string().optional(),
  agentSaid: z.string().optional(),
});
const Message = z.union([
  z.object({ replica: z.string(), hello: z.literal(true) }),
  z.object({ replica: z.string(), calls: z.array(Activity), ended: z.array(z.string()) }),
]);

const shorten = (words: string | undefined): string | undefined => (words === undefined || words.length <= WORDS_MAX ? words : `${words.slice(0, WORDS_MAX - 1)}…`);

export class LiveRelay implements CallActivityObserver {
  /** This replica's calls as last told, for a newcomer's hello. */
  private readonly mine = new Map<string, CallActivity>();
  private readonly changes = new Map<string, CallActivity | null>();
  /** Other replicas' calls shown here, by session id: whose they are. */
  private readonly theirs = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private listener: pg.Client | undefined;
  /** The notifications in flight, one after another: pg deprecates a second query on a busy client. */
  private sending: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly log: Logger;

  constructor(
    private readonly url: string,
    private readonly registry: ReplicaRegistry,
    /** Where the other replicas' calls are shown (the dashboard's live view). */
    private readonly view: CallActivityObserver,
    logger: Logger,
    /** The words as they may be written anywhere: redacted once a batch goes, never on the speak path. */
    private readonly redact: Redact = keepWords,
  ) {
    this.log = logger.child({ component: 'live-relay' });
    this.stopBeats = registry.onBeat(() => void this.dropTheDead());
  }

  private readonly stopBeats: () => void;

  /** Starts listening, then says hello: the others answer with their calls. A store that does not answer now is tried again. */
  async start(): Promise<void> {
    await this.listen().catch((error: unknown) => {
      this.log.warn({ err: error }, 'the live calls of the other replicas are not heard yet; trying again');
      this.listenLater();
    });
  }

  /** The replica holding a call another replica told of; undefined for this one's own (and unknown) calls. */
  replicaOf(sessionId: string): string | undefined {
    return this.theirs.get(sessionId);
  }

  changed(activity: CallActivity): void {
    this.mine.set(activity.sessionId, activity);
    this.note(activity.sessionId, activity);
  }

  ended(sessionId: string): void {
    this.mine.delete(sessionId);
    this.note(sessionId, null);
  }

  /** The last changes (the calls ended by the shutdown) go out, then the connection closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.timer);
    if (this.changes.size > 0) this.flush();
    this.closed = true;
    this.stopBeats();
    const listener = this.listener;
    this.listener = undefined;
    await this.sending;
    await listener?.end().catch(() => undefined);
  }

  private note(sessionId: string, activity: CallActivity | null): void {
    this.changes.set(sessionId, activity);
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    const changes = [...this.changes];
    this.changes.clear();
    const calls = changes.flatMap(([, call]) => (call ? [call] : []));
    const ended = changes.flatMap(([id, call]) => (call ? [] : [id]));
    this.publish(calls, ended);
  }

  /** In messages that fit PostgreSQL's limit on a notification, measured in bytes as it counts them. */
  private publish(calls: readonly CallActivity[], ended: readonly string[]): void {
    let message = { replica: this.registry.id, calls: [] as CallActivity[], ended: [] as string[] };
    let bytes = Buffer.byteLength(JSON.stringify(message));
    const add = (item: CallActivity | string): void => {
      const size = Buffer.byteLength(JSON.stringify(item)) + 1;
      if (bytes + size > MESSAGE_MAX_BYTES && message.calls.length + message.ended.length > 0) {
        this.notify(message);
        message = { replica: this.registry.id, calls: [], ended: [] };
        bytes = Buffer.byteLength(JSON.stringify(message));
      }
      if (typeof item === 'string') message.ended.push(item);
      else message.calls.push(item);
      bytes += size;
    };
    const words = (text: string | undefined): string | undefined => shorten(text === undefined ? undefined : this.redact(text));
    for (const call of calls) add({ ...call, callerSaid: words(call.callerSaid), agentSaid: words(call.agentSaid) });
    for (const id of ended) add(id);
    if (message.calls.length + message.ended.length > 0) this.notify(message);
  }

  private notify(message: z.infer<typeof Message>): void {
    const listener = this.listener;
    if (!listener) return;
    const payload = JSON.stringify(message);
    this.sending = this.sending
      .then(() => listener.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]))
      .catch((error: unknown) => this.log.warn({ err: error }, 'the other replicas could not be told of this replica\'s live calls'));
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'hotline-live' });
    client.on('notification', (message) => this.received(message.payload));
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'the live calls of the other replicas are not heard for now; reconnecting');
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.notify({ replica: this.registry.id, hello: true });
  }

  private lost(client: pg.Client): void {
    if (this.closed || this.listener !== client) return;
    this.listener = undefined;
    client.end().catch(() => undefined);
    this.listenLater();
  }

  private listenLater(): void {
    setTimeout(() => {
      if (this.closed) return;
      this.listen().catch((error: unknown) => {
        this.log.warn({ err: error }, 'listening for the other replicas\' live calls failed; trying again');
        this.listenLater();
      });
    }, RECONNECT_MS).unref();
  }

  private received(payload: string | undefined): void {
    let message: z.infer<typeof Message>;
    try {
      message = Message.parse(JSON.parse(payload ?? ''));
    } catch {
      return;
    }
    if (message.replica === this.registry.id) return;
    if ('hello' in message) {
      this.publish([...this.mine.values()], []);
      return;
    }
    for (const call of message.calls) {
      this.theirs.set(call.sessionId, message.replica);
      this.view.changed({ ...call, from: call.from, to: call.to, callerSaid: call.callerSaid, agentSaid: call.agentSaid });
    }
    for (const id of message.ended) {
      if (this.theirs.get(id) !== message.replica) continue;
      this.theirs.delete(id);
      this.view.ended(id);
    }
  }

  private async dropTheDead(): Promise<void> {
    if (this.theirs.size === 0) return;
    const alive = new Set((await this.registry.alive().catch(() => undefined))?.map((r) => r.id) ?? []);
    if (alive.size === 0) return;
    for (const [id, replica] of this.theirs) {
      if (alive.has(replica)) continue;
      this.theirs.delete(id);
      this.view.ended(id);
    }
  }
}
