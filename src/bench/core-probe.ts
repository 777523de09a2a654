/**
 * Watches Hotline's call core from outside, without changing its code: wraps
 * the registry's dispatch (events entering the core) and the sinks it hands
 * to calls (actions leaving the core, before the transport validates and
 * sends them). Lets the bench split a latency into Hotline's part and the
 * wire's, and tell a stale speak from one that crossed a barge-in in flight.
 * Costs one wrapper call per event and per action while installed.
 */
import type { ActionSink } from '../call/call.js';
import type { CallRegistry } from '../call/call-registry.js';
import type { VoiceEvent } from '../protocol/events.js';
import { now } from './clock.js';

export interface CoreHooks {
  /** Before the core handles the event. */
  entered?(event: VoiceEvent, at: number): void;
  /** After the core has handled it (everything it did synchronously is done). */
  handled?(event: VoiceEvent): void;
  /** A speak leaves the core through the call's sink. */
  speakSent?(text: string, at: number): void;
  /** The transport has validated and sent that speak: it has left Hotline. */
  speakLeft?(text: string, at: number): void;
}

/** Installs the probe; returns its uninstaller. */
export function probeCore(registry: CallRegistry, hooks: CoreHooks): () => void {
  const original = registry.dispatch;
  const wrapped = new WeakMap<ActionSink, ActionSink>();
  const wrap = (sink: ActionSink): ActionSink => {
    let outer = wrapped.get(sink);
    if (!outer) {
      outer = {
        send(action) {
          if (action.type !== 'speak') return sink.send(action);
          hooks.speakSent?.(action.text, now());
          sink.send(action);
          hooks.speakLeft?.(action.text, now());
        },
        ...(sink.idle ? { idle: () => sink.idle?.() } : {}),
      };
      // One wrapper per sink, so the probe allocates nothing per event.
      wrapped.set(sink, outer);
    }
    return outer;
  };
  registry.dispatch = function dispatchProbed(this: CallRegistry, event, sink, pacing) {
    hooks.entered?.(event, now());
    try {
      return original.call(this, event, wrap(sink), pacing);
    } finally {
      hooks.handled?.(event);
    }
  };
  return () => {
    registry.dispatch = original;
  };
}
