import type { CallActivity, CallActivityObserver } from '../call/ports/call-activity.js';

/** One viewer of the live calls: how it wants a call shown, and where its messages go. */
export interface LiveViewer {
  view(call: CallActivity): unknown;
  send(event: 'snapshot' | 'update', data: string): void;
}

/** How often changes reach the viewers, at most: a call's burst of sentences becomes one message. */
const FLUSH_MS = 250;
/** Calls per message: about 0.1 ms of work on the calls' event loop. */
const SLICE = 100;

/**
 * The calls in progress as the dashboard shows them. The core tells it of
 * every change on the call path; that costs a Map write. Viewers get the
 * changes batched, from a timer of their own, never from the call path.
 */
export class LiveCalls implements CallActivityObserver {
  private readonly calls = new Map<string, CallActivity>();
  /** Changed since the last flush: the call, or null once it ended. */
  private readonly changes = new Map<string, CallActivity | null>();
  private readonly viewers = new Set<LiveViewer>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly flushMs = FLUSH_MS) {}

  changed(activity: CallActivity): void {
    this.calls.set(activity.sessionId, activity);
    if (this.viewers.size > 0) this.note(activity.sessionId, activity);
  }

  ended(sessionId: string): void {
    this.calls.delete(sessionId);
    if (this.viewers.size > 0) this.note(sessionId, null);
  }

  /** The call in progress with this session id, if there is one. */
  get(sessionId: string): CallActivity | undefined {
    return this.calls.get(sessionId);
  }

  get size(): number {
    return this.calls.size;
  }

  /** Every call in progress now (this replica's, and the others' it was told of). */
  list(): CallActivity[] {
    return [...this.calls.values()];
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  /** Sends the viewer every call in progress now, then each change; returns the unsubscribe. */
  watch(viewer: LiveViewer): () => void {
    viewer.send('snapshot', JSON.stringify([...this.calls.values()].map((call) => viewer.view(call))));
    this.viewers.add(viewer);
    return () => {
      this.viewers.delete(viewer);
      if (this.viewers.size === 0) this.stop();
    };
  }

  close(): void {
    this.stop();
    this.viewers.clear();
  }

  private note(sessionId: string, activity: CallActivity | null): void {
    this.changes.set(sessionId, activity);
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), this.flushMs);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    const changes = [...this.changes];
    this.changes.clear();
    this.send(changes, 0);
  }

  /**
   * Sends the changes a slice at a time, yielding between slices: with a thousand calls changing,
   * one message would hold the event loop the calls share for over a millisecond.
   */
  private send(changes: readonly [string, CallActivity | null][], from: number): void {
    const slice = changes.slice(from, from + SLICE);
    for (const viewer of this.viewers) {
      const calls = slice.flatMap(([, call]) => (call ? [viewer.view(call)] : []));
      const ended = slice.flatMap(([id, call]) => (call ? [] : [id]));
      viewer.send('update', JSON.stringify({ calls, ended }));
    }
    if (from + SLICE < changes.length) setImmediate(() => this.send(changes, from + SLICE));
  }

  private stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.changes.clear();
  }
}
