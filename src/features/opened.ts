/**
 * What a start has opened, to be closed in reverse. Every feature pushes what it opens the moment
 * it opens it, so the same stack serves a shutdown and a start that fails halfway: a port already
 * taken after the store opened leaves neither the store, the replica's heartbeat nor a timer behind.
 *
 * Closing has two passes over the stack, both from the top: first every feature stops taking new
 * work (`stopTaking`: no new call, no new dial, no timer firing), then each closes. Without the
 * first pass, the calls being ended by the transports' close could still be joined by new ones
 * dialled by a campaign further down the stack.
 */
import type { Logger } from '../logger.js';

export interface Closable {
  /** Stops taking new work; what is under way goes on until `close`. */
  readonly stopTaking?: () => void | Promise<void>;
  readonly close?: () => void | Promise<void>;
}

export class OpenedStack {
  private readonly opened: { readonly name: string; readonly closable: Closable }[] = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  /** Keeps `closable` to be closed before everything pushed earlier. */
  push(name: string, closable: Closable): void {
    if (this.closing) throw new Error(`${name} was opened while Hotline was closing`);
    this.opened.push({ name, closable });
  }

  /**
   * Closes everything, newest first; a close that fails is logged and the rest still close. Called
   * twice (a shutdown, then a test's close), the second call waits for the first.
   */
  closeAll(): Promise<void> {
    this.closing ??= this.run();
    return this.closing;
  }

  private async run(): Promise<void> {
    const newestFirst = [...this.opened].reverse();
    for (const { name, closable } of newestFirst) await this.step(name, 'stop taking work', closable.stopTaking);
    for (const { name, closable } of newestFirst) await this.step(name, 'close', closable.close);
  }

  private async step(name: string, what: string, action: (() => void | Promise<void>) | undefined): Promise<void> {
    if (!action) return;
    try {
      await action();
    } catch (error) {
      this.logger.warn({ err: error, feature: name }, `${name} could not ${what}`);
    }
  }
}
