import { writeFile } from 'node:fs/promises';

export interface RecordedEvent {
  /** Milliseconds since the call started (startedAt). */
  at: number;
  event: unknown;
}

export interface RecordedAction {
  at: number;
  msSinceCallerSpoke: number;
  action: unknown;
}

export interface CallRecordJson {
  sessionId: string;
  transport: 'websocket' | 'webhook';
  /** ISO time of session_start. */
  startedAt: string;
  events: RecordedEvent[];
  actions: RecordedAction[];
}

/** Everything said on one call, both ways, for --json and bug reports. */
export class CallRecord {
  private readonly startedAtWall = new Date();
  private readonly startedAt = performance.now();
  readonly events: RecordedEvent[] = [];
  readonly actions: RecordedAction[] = [];

  constructor(
    readonly sessionId: string,
    readonly transport: 'websocket' | 'webhook',
  ) {}

  event(event: unknown, at = performance.now()): void {
    this.events.push({ at: this.since(at), event });
  }

  action(action: unknown, at: number, msSinceCallerSpoke: number): void {
    this.actions.push({ at: this.since(at), msSinceCallerSpoke: Math.round(msSinceCallerSpoke), action });
  }

  toJSON(): CallRecordJson {
    return {
      sessionId: this.sessionId,
      transport: this.transport,
      startedAt: this.startedAtWall.toISOString(),
      events: this.events,
      actions: this.actions,
    };
  }

  async save(file: string): Promise<void> {
    await writeFile(file, `${JSON.stringify(this.toJSON(), null, 2)}\n`);
  }

  private since(at: number): number {
    return Math.round(at - this.startedAt);
  }
}
