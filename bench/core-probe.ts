/**
 * Watches Hotline's call core from outside, without changing its code: wraps
 * the registry's dispatch (events entering the core) and the send of the sinks
 * it hands to calls (actions leaving the core, before the transport validates
 * and sends them). Lets the bench split a latency into Hotline's part and the
 * wire's, and tell a stale speak from one that crossed a barge-in in flight.
 * Costs one wrapper call per event and per action while installed.
 */
import type { ActionSink } from '../src/call/call-deps.js';
import type { CallRegistry } from '../src/call/call-registry.js';
import type { VoiceEvent } from '../src/protocol/events.js';
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
  // The sink's own send is replaced, once per sink: the core and the transport tell connections apart by
  // the sink's identity (who owns a call), so a wrapper object in its place would change what is measured.
  const patched = new Map<ActionSink, ActionSink['send']>();
  const patch = (sink: ActionSink): ActionSink => {
    if (patched.has(sink)) return sink;
    const send = sink.send.bind(sink);
    patched.set(sink, sink.send);
    sink.send = function sendProbed(action) {
      if (action.type !== 'speak') return send(action);
      const said = action.text ?? action.ssml ?? '';
      hooks.speakSent?.(said, now());
      send(action);
      hooks.speakLeft?.(said, now());
    };
    return sink;
  };
  registry.dispatch = function dispatchProbed(this: CallRegistry, event, sink, pacing) {
    hooks.entered?.(event, now());
    try {
      return original.call(this, event, patch(sink), pacing);
    } finally {
      hooks.handled?.(event);
    }
  };
  return () => {
    registry.dispatch = original;
    for (const [sink, send] of patched) sink.send = send;
    patched.clear();
  };
}
