import { setTimeout as sleep } from 'node:timers/promises';
import type { VoiceEvent } from '../protocol/events.js';
import { maskedOrNone } from '../phone/mask-number.js';
import type { Call } from './call.js';
import { CallFactory, type CallFactoryOptions, type DispatchOptions } from './call-factory.js';
import type { ActionSink, LeaveReason } from './call-deps.js';
import type { CallControl, ControlOutcome } from './ports/call-control.js';
import type { CallSoFar } from './ports/call-summary.js';
import type { PendingCall } from './ports/outbound-request.js';
import type { PriorCall } from './ports/prior-call.js';

export type { DispatchOptions } from './call-factory.js';

/** What a call is made of (call-factory.ts), and how many calls there may be. */
export interface CallRegistryOptions extends CallFactoryOptions {
  /** New calls beyond this many are refused. */
  maxCalls: number;
  /** Calls with no event for this long are ended; 0 never. */
  idleTimeoutMs: number;
}

const STREAMING: DispatchOptions = { pacing: 'stream', canStopPlayback: true };

/** Ended session ids remembered, so a late event of a finished call is never taken for one to adopt. */
const ENDED_REMEMBERED = 10_000;

/** How long a retired call's last actions may wait for the service to collect them (webhook). */
const RETIRE_DRAIN_MS = 10_000;
/** The longest a retired call's goodbye may take before the call ends regardless. */
const RETIRE_LEAVE_MS = 30_000;

/** Every call in progress, by session id: the one core both transports drive. */
export class CallRegistry implements CallControl {
  private readonly calls = new Map<string, Call>();
  /** When each call last had an event, for the idle reaper. */
  private readonly lastEventAt = new Map<string, number>();
  private readonly factory: CallFactory;
  private readonly endedListeners: ((sessionId: string) => void)[] = [];
  private readonly ended = new Set<string>();
  private emptyWaiters: (() => void)[] = [];
  private accepting = true;
  /** Calls Hotline is ending itself (idle, shutdown): each is retired once. */
  private readonly retiring = new Set<string>();
  /** Calls whose connection dropped, waiting for the service to reconnect. */
  private readonly orphans = new Map<string, NodeJS.Timeout>();
  /** Connections open without a call yet: they count against MAX_CALLS like calls do. */
  private heldSlots = 0;
  /** Ended calls whose transcript is still being closed: the observer hears of each after. */
  private readonly recording = new Set<Promise<void>>();
  private readonly reaper: NodeJS.Timeout | undefined;

  constructor(private readonly options: CallRegistryOptions) {
    this.factory = new CallFactory(options);
    const { idleTimeoutMs } = options;
    if (idleTimeoutMs > 0) {
      this.reaper = setInterval(() => this.reapIdle(), Math.min(30_000, Math.max(100, idleTimeoutMs / 4)));
      this.reaper.unref();
    }
  }

  get size(): number {
    return this.calls.size;
  }

  /** False while shutting down or at MAX_CALLS: new calls are refused. */
  get canAccept(): boolean {
    return this.accepting && this.calls.size + this.heldSlots < this.options.maxCalls;
  }

  /**
   * Takes one of the MAX_CALLS places for a connection that has not started a
   * call yet; undefined when none is free. The returned function gives it back
   * (once; further calls do nothing) — before the connection's session_start is
   * dispatched, which then takes the place as a call.
   */
  holdSlot(): (() => void) | undefined {
    if (!this.canAccept) return undefined;
    this.heldSlots += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.heldSlots -= 1;
    };
  }

  get isAccepting(): boolean {
    return this.accepting;
  }

  /** Shutdown begins: calls in progress go on, new ones are refused. */
  stopAccepting(): void {
    this.accepting = false;
  }

  /** Resolves once no call is in progress. */
  whenEmpty(): Promise<void> {
    if (this.calls.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptyWaiters.push(resolve));
  }

  /** The numbers of the people on the line in the calls in progress, as the service wrote them: no one is dialled twice at once. */
  *numbersOnTheLine(): Iterable<string> {
    for (const call of this.calls.values()) if (call.party) yield call.party;
  }

  onCallEnded(listener: (sessionId: string) => void): void {
    this.endedListeners.push(listener);
  }

  get(sessionId: string): Call | undefined {
    return this.calls.get(sessionId);
  }

  /**
   * True for an event of a call that ended in this process: it is late, not a call to adopt. A
   * session_start is never late: the service may use an id again, and that is a new call.
   */
  /** Whether the session's call ended in this process a moment ago (and no new call has it now). */
  hasEnded(sessionId: string): boolean {
    return !this.calls.has(sessionId) && this.ended.has(sessionId);
  }

  isLate(event: Pick<VoiceEvent, 'type' | 'session'>): boolean {
    return event.type !== 'session_start' && !this.calls.has(event.session.id) && this.ended.has(event.session.id);
  }

  /**
   * Routes one event to its call; session_start creates the call, and so does
   * any other event of a session this process does not know (a restart,
   * another instance): that call is adopted. Returns the call, or undefined
   * when the event is refused (full, shutting down, a session that ended here,
   * or one another open connection owns).
   */
  dispatch(event: VoiceEvent, sink: ActionSink, options: DispatchOptions = STREAMING): Call | undefined {
    const id = event.session.id;
    let call = this.calls.get(id);
    if (!call) {
      if (event.type === 'session_end') {
        if (this.ended.has(id)) return undefined;
        if (this.options.earlierLife) void this.endTakenUp(event, sink, options);
        else this.notConnected(event.session, event.reason ?? 'session_end');
        return undefined;
      }
      const starting = event.type === 'session_start';
      // A late event of a call that ended here is never a call to adopt; a session_start is a new call.
      if ((!starting && this.ended.has(id)) || !this.canAccept) return undefined;
      call = this.create(id, sink, options, event.session, starting);
    } else if (call.sink !== sink) {
      // A session belongs to the connection that started it; a newcomer takes over only once that one is gone.
      if (call.sink.open !== false) {
        this.options.logger.warn({ sessionId: id, type: event.type }, 'event for a call of another connection refused');
        return undefined;
      }
      this.options.logger.info({ sessionId: id }, 'call taken over by a new connection');
      clearTimeout(this.orphans.get(id));
      this.orphans.delete(id);
      call.attach(sink);
    }
    this.lastEventAt.set(id, Date.now());
    if (event.type === 'session_end') {
      void this.end(id, event.reason ?? 'session_end', 'service');
    } else {
      call.handle(event);
    }
    return call;
  }

  /**
   * A connection closed: the calls it still owns end with it (a call another
   * connection took over goes on). With `reconnectGraceMs` — the connection
   * dropped without a close handshake — the call waits that long for the
   * service to reconnect and take it over, saying nothing meanwhile.
   */
  release(sessionId: string, sink: ActionSink, reason: string, reconnectGraceMs = 0): void {
    const call = this.calls.get(sessionId);
    if (!call || call.sink !== sink) return;
    if (reconnectGraceMs <= 0) {
      void this.end(sessionId, reason);
      return;
    }
    call.suspend();
    const timer = setTimeout(() => {
      this.orphans.delete(sessionId);
      if (this.calls.get(sessionId) === call && call.sink === sink) void this.end(sessionId, reason);
    }, reconnectGraceMs);
    timer.unref();
    this.orphans.set(sessionId, timer);
  }

  /**
   * Hotline ends a call itself (idle, shutdown): the caller hears a short line,
   * the hangup or transfer follows once it has played and has left for the
   * service, then the call ends and its connection closes.
   */
  async retire(sessionId: string, why: LeaveReason): Promise<void> {
    const call = this.calls.get(sessionId);
    if (!call || this.retiring.has(sessionId)) return;
    this.retiring.add(sessionId);
    try {
      // A caller who keeps making noise can hold the line back only so long.
      await Promise.race([call.leave(why), sleep(RETIRE_LEAVE_MS, undefined, { ref: false })]);
      const { sink } = call;
      // Over the webhook the line and the hangup wait for the service's next request.
      await sink.drain?.(RETIRE_DRAIN_MS);
      // Closed first, so the connection goes as "call ended", not as one left idle.
      sink.close?.();
      await this.end(sessionId, why === 'idle' ? 'idle_timeout' : why);
    } finally {
      this.retiring.delete(sessionId);
    }
  }

  transferTargets(): { default: boolean; named: string[] } {
    return this.factory.transferTargets();
  }

  transfer(sessionId: string, target?: string): ControlOutcome {
    const call = this.calls.get(sessionId);
    if (!call) return 'not_found';
    if (this.retiring.has(sessionId)) return 'ending';
    return call.handOver(target);
  }

  hangUp(sessionId: string): ControlOutcome {
    const call = this.calls.get(sessionId);
    if (!call) return 'not_found';
    if (this.retiring.has(sessionId)) return 'ending';
    this.retire(sessionId, 'operator').catch((error: unknown) =>
      this.options.logger.error({ err: error, sessionId }, 'ending a call for an operator failed'),
    );
    return 'done';
  }

  /** Resolves once every call ended so far has been handed to the observer (its transcript on disk first). */
  async whenRecorded(): Promise<void> {
    while (this.recording.size > 0) await Promise.allSettled([...this.recording]);
  }

  /** Retires every call in progress (shutdown). */
  async retireAll(why: LeaveReason): Promise<void> {
    await Promise.all([...this.calls.keys()].map((id) => this.retire(id, why)));
  }

  /** Ends a call and frees it; `origin` tells who ended it (the service, or Hotline: socket closed, shutdown). */
  end(sessionId: string, reason: string, origin: 'service' | 'hotline' = 'hotline'): Promise<void> {
    const call = this.calls.get(sessionId);
    if (!call) return Promise.resolve();
    this.calls.delete(sessionId);
    this.lastEventAt.delete(sessionId);
    clearTimeout(this.orphans.get(sessionId));
    this.orphans.delete(sessionId);
    const closed = this.options.transcripts.track(call.end(reason, origin), sessionId);
    const { observer } = this.options;
    if (observer) {
      const summary = call.summary(reason, origin);
      const recorded = closed.then(() => {
        try {
          // The file the call was placed in is known once its transcript is closed.
          observer.callEnded({ ...summary, transcriptFile: call.transcriptFile });
        } catch (error) {
          this.options.logger.error({ err: error, sessionId }, 'recording the ended call failed');
        }
      });
      this.recording.add(recorded);
      void recorded.finally(() => this.recording.delete(recorded));
    }
    this.forget(sessionId);
    return closed;
  }

  /** A call is gone: its id is remembered as ended, its transport told, and whoever waits for no calls. */
  private forget(sessionId: string): void {
    this.ended.add(sessionId);
    if (this.ended.size > ENDED_REMEMBERED) this.ended.delete(this.ended.values().next().value!);
    for (const listener of this.endedListeners) listener(sessionId);
    if (this.calls.size === 0) {
      const waiters = this.emptyWaiters;
      this.emptyWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /**
   * An event of a session this process did not know turned out to belong to a call whose
   * transcript says it ended (before a restart): that call is not opened again. Nothing of the
   * adopted call is kept — no transcript line, no record — and the event goes unanswered.
   */
  private discard(sessionId: string, call: Call): void {
    if (this.calls.get(sessionId) !== call) return;
    this.calls.delete(sessionId);
    this.lastEventAt.delete(sessionId);
    call.drop();
    this.options.logger.info({ sessionId }, 'event for a call that has ended refused: its transcript ends with its session_end');
    this.forget(sessionId);
  }

  /**
   * Lets go of a call between turns for another replica to take up (this one is stopping): its
   * record as it stands, once its transcript is closed; undefined when the call is not between
   * turns now (or not here). Nobody is told the call ended: it goes on.
   */
  letGo(sessionId: string): CallSoFar | undefined {
    const call = this.calls.get(sessionId);
    if (!call || this.retiring.has(sessionId)) return undefined;
    const record = call.quietRecord();
    if (!record) return undefined;
    this.calls.delete(sessionId);
    this.lastEventAt.delete(sessionId);
    const closed = this.options.transcripts.track(call.letGo(), sessionId);
    // Its transcript is closed before the process exits, as an ended call's is.
    this.recording.add(closed);
    void closed.finally(() => this.recording.delete(closed));
    this.forget(sessionId);
    return record;
  }

  /** Ends every call (shutdown) and waits until every transcript is on disk. */
  async endAll(reason: string): Promise<void> {
    clearInterval(this.reaper);
    await Promise.all([...this.calls.keys()].map((id) => this.end(id, reason)));
    await this.options.transcripts.flush();
  }

  /**
   * A session_end for a session never seen here: if it answers an outbound
   * request (a busy line), that request is over and its requester is told.
   */
  private notConnected(session: VoiceEvent['session'], reason: string): void {
    if (session.direction !== 'outbound') return;
    const taken = this.options.pendingCalls.take(session.to_phone_number);
    if (!(taken instanceof Promise)) return this.tellNotConnected(session, reason, taken);
    void taken.then((request) => this.tellNotConnected(session, reason, request));
  }

  private tellNotConnected(session: VoiceEvent['session'], reason: string, request: PendingCall | undefined): void {
    if (!request) return;
    this.options.logger.info({ sessionId: session.id, to: maskedOrNone(session.to_phone_number), reason }, 'requested outbound call did not connect');
    try {
      this.options.observer?.callNotConnected?.(request, reason);
    } catch (error) {
      this.options.logger.error({ err: error, sessionId: session.id }, 'recording the call that did not connect failed');
    }
  }

  private reapIdle(): void {
    const cutoff = Date.now() - this.options.idleTimeoutMs;
    for (const [id, at] of this.lastEventAt) {
      if (at > cutoff) continue;
      if (this.retiring.has(id)) continue;
      this.options.logger.info({ sessionId: id }, 'call idle for too long; saying goodbye and hanging up');
      this.retire(id, 'idle').catch((error: unknown) => this.options.logger.error({ err: error, sessionId: id }, 'ending an idle call failed'));
    }
  }

  /**
   * A session_end of a call this process never had, whose record is elsewhere (handed over by a
   * stopping replica, or left by a killed one) and in progress: the call is taken up only to end,
   * so its one record ends as the caller ended it. Any other is a call that never connected.
   */
  private async endTakenUp(event: Extract<VoiceEvent, { type: 'session_end' }>, sink: ActionSink, options: DispatchOptions): Promise<void> {
    const id = event.session.id;
    const reason = event.reason ?? 'session_end';
    const prior = await this.options.earlierLife?.(id).catch((error: unknown) => {
      this.options.logger.warn({ err: error, sessionId: id }, 'the record of an ended call could not be read from the store');
      return undefined;
    });
    if (!prior || prior.ended || this.calls.has(id) || this.ended.has(id)) {
      if (!this.calls.has(id) && !this.ended.has(id)) this.notConnected(event.session, reason);
      return;
    }
    const call = this.create(id, sink, options, event.session, false, prior);
    await call.whenReady();
    if (this.calls.get(id) === call) await this.end(id, reason, 'service');
  }

  private create(
    id: string,
    sink: ActionSink,
    options: DispatchOptions,
    session: VoiceEvent['session'],
    starting: boolean,
    /** Its record elsewhere, when already read. */
    known?: PriorCall,
  ): Call {
    const call = this.factory.make(id, sink, options, session, starting, (ended) => this.discard(id, ended), known);
    this.calls.set(id, call);
    if (starting) this.ended.delete(id);
    return call;
  }
}
