/**
 * What a person running Hotline may do to a call in progress — from the
 * dashboard or the admin API. The core owns this interface and the registry
 * implements it, so neither of those imports the registry.
 */

/** How a request to a call went. */
export type ControlOutcome =
  /** Under way: the caller hears the line, then the transfer or hangup follows. */
  | 'done'
  /** No call in progress with this session id. */
  | 'not_found'
  /** The call is already ending or being handed over. */
  | 'ending'
  /** No such transfer target: neither TRANSFER_TARGET nor one of TRANSFER_TARGETS by that name. */
  | 'no_destination';

export interface CallControl {
  /** Where a call can be handed over: the default target (`undefined` when TRANSFER_TARGET is unset) and the named ones. */
  transferTargets(): { readonly default: boolean; readonly named: readonly string[] };
  /** Hands the call to a colleague: the default target, or a named one. Asynchronous when the call is another replica's. */
  transfer(sessionId: string, target?: string): ControlOutcome | Promise<ControlOutcome>;
  /** Ends the call with a short goodbye. */
  hangUp(sessionId: string): ControlOutcome | Promise<ControlOutcome>;
}
