/**
 * The actions Hotline sent in one scenario, read with a cursor: an expectation
 * takes actions from the cursor on, and waits, with a timeout, for more.
 * FakeVoiceService.next() cannot time out or be withdrawn, so the log keeps
 * its own cursor over the service's `actions`.
 */
import { describeAudio, describeSms, describeSpeakOptions, describeTransfer } from '../simulator/action-summary.js';
import type { FakeVoiceService, ReceivedAction } from '../testing/voice-service-client.js';
import { WakeUp } from './wake-up.js';

export class ActionLog {
  private cursor = 0;
  private readonly changes = new WakeUp();
  private connectionClosed = false;

  constructor(private readonly service: FakeVoiceService) {
    // Registered after the service's own listener, so the action is in `actions` when this runs.
    service.socket.on('message', () => this.wake());
    void service.closed.then(() => {
      this.connectionClosed = true;
      this.wake();
    });
  }

  get all(): readonly ReceivedAction[] {
    return this.service.actions;
  }

  get closed(): boolean {
    return this.connectionClosed;
  }

  /** Actions not yet taken, oldest first. */
  unread(): ReceivedAction[] {
    return this.service.actions.slice(this.cursor);
  }

  /** Moves the cursor past this action (which must be unread). */
  takeThrough(action: ReceivedAction): void {
    const index = this.service.actions.indexOf(action, this.cursor);
    if (index >= 0) this.cursor = index + 1;
  }

  /**
   * Resolves with check()'s first defined result, checking now and after every
   * action; undefined once timeoutMs pass or the connection closes without one.
   */
  until<T>(check: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
    return this.changes.until(check, timeoutMs, () => this.connectionClosed);
  }

  private wake(): void {
    this.changes.wake();
  }
}

const QUOTE_LIMIT = 120;

/**
 * `speak "Hello…" [timeout 8 s]`, `transfer → 4930999999 · caller id "Hotline" 4915112345678`,
 * `audio clip 800 ms`, `hangup`: how actions appear in failure messages, options and all,
 * since an option is as likely to be what went wrong as the words.
 */
export function describeAction(action: ReceivedAction): string {
  if (action.type === 'speak') {
    const said = typeof action.text === 'string' ? action.text : typeof action.ssml === 'string' ? action.ssml : '';
    const options = describeSpeakOptions(action);
    return `speak ${quote(said)}${options === '' ? '' : ` ${options}`}`;
  }
  if (action.type === 'transfer') return `transfer ${describeTransfer(action)}`;
  if (action.type === 'audio') return `audio ${describeAudio(action)}`;
  if (action.type === 'send_sms') return `send_sms ${describeSms(action)}`;
  return action.type;
}

export function describeActions(actions: readonly ReceivedAction[]): string {
  if (actions.length === 0) return 'nothing';
  const shown = actions.slice(0, 6).map(describeAction);
  if (actions.length > shown.length) shown.push(`and ${actions.length - shown.length} more`);
  return shown.join(', ');
}

export function quote(text: string): string {
  return JSON.stringify(text.length > QUOTE_LIMIT ? `${text.slice(0, QUOTE_LIMIT - 1)}…` : text);
}
