import type { Action } from '../../protocol/actions.js';

/**
 * What a call is doing right now, for whoever shows calls live (a dashboard).
 * The core owns this interface; `server.ts` wires an implementation in.
 */

export const CALL_PHASES = ['greeting', 'listening', 'thinking', 'speaking', 'tool', 'transferring', 'ending'] as const;
export type CallPhase = (typeof CALL_PHASES)[number];

export interface CallActivity {
  readonly sessionId: string;
  readonly direction: 'inbound' | 'outbound';
  readonly from: string | undefined;
  readonly to: string | undefined;
  /** ISO time the call began. */
  readonly startedAt: string;
  readonly phase: CallPhase;
  /** The caller's latest words (or keys). */
  readonly callerSaid: string | undefined;
  /** The latest words Hotline sent to be spoken. */
  readonly agentSaid: string | undefined;
}

export interface CallActivityObserver {
  /**
   * The call's phase or latest words changed. Called on the call path, synchronously:
   * an implementation notes the change and returns; any work it does comes later, elsewhere.
   */
  changed(activity: CallActivity): void;
  ended(sessionId: string): void;
}

/** What the tracker asks the call when something happened. */
export interface ActivityProbe {
  /** A turn is generating. */
  generating(): boolean;
  /** Speech was sent and has not finished playing. */
  speaking(): boolean;
}

/**
 * Follows one call's phase from what it sends and hears, and tells the
 * observer of each change. Without an observer every method returns at once.
 */
export class CallActivityTracker {
  private current: CallActivity | undefined;
  private toolsRunning = 0;
  /** Words changed since the observer was last told. */
  private dirty = false;
  /** A transfer or hangup went out: the call is on its way somewhere else. */
  private leaving: 'transferring' | 'ending' | undefined;

  constructor(
    private readonly observer: CallActivityObserver | undefined,
    private readonly probe: ActivityProbe,
  ) {}

  began(sessionId: string, session: { direction: 'inbound' | 'outbound'; from: string | undefined; to: string | undefined }): void {
    if (!this.observer) return;
    this.leaving = undefined;
    const base = this.current ?? { sessionId, startedAt: new Date().toISOString(), phase: 'greeting' as const, callerSaid: undefined, agentSaid: undefined };
    this.current = { ...base, ...session };
    this.dirty = true;
    this.note();
  }

  callerSaid(text: string): void {
    if (!this.current) return;
    this.current = { ...this.current, callerSaid: text };
    this.dirty = true;
    this.note();
  }

  sent(action: Action): void {
    if (!this.current) return;
    if (action.type === 'speak') {
      this.current = { ...this.current, agentSaid: action.text };
      this.dirty = true;
    } else if (action.type === 'transfer') this.leaving = 'transferring';
    else if (action.type === 'hangup') this.leaving = 'ending';
    this.note();
  }

  /** Wraps a run of business tools: the call is "in a tool" while it lasts. */
  async duringTools<T>(run: Promise<T>): Promise<T> {
    if (!this.current) return run;
    this.toolsRunning += 1;
    this.note();
    try {
      return await run;
    } finally {
      this.toolsRunning -= 1;
      this.note();
    }
  }

  /** Something happened (an event was handled): the phase may have changed. */
  note(): void {
    const current = this.current;
    if (!current || !this.observer) return;
    const phase = this.phase(current);
    if (phase === current.phase && !this.dirty) return;
    this.dirty = false;
    this.current = phase === current.phase ? current : { ...current, phase };
    this.observer.changed(this.current);
  }

  ended(): void {
    if (!this.current || !this.observer) return;
    this.observer.ended(this.current.sessionId);
    this.current = undefined;
  }

  private phase(current: CallActivity): CallPhase {
    if (this.leaving) return this.leaving;
    if (this.toolsRunning > 0) return 'tool';
    if (this.probe.speaking()) return current.callerSaid === undefined ? 'greeting' : 'speaking';
    if (this.probe.generating()) return 'thinking';
    return current.callerSaid === undefined && current.agentSaid === undefined ? 'greeting' : 'listening';
  }
}
