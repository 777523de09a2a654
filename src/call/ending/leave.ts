import type { PromptName } from '../../prompts/prompt-store.js';
import type { LeaveReason } from '../call-deps.js';
import type { Ending } from './pending-ending.js';
import { defaultDestination, type TransferSetup } from './transfer.js';

/** What the caller hears as Hotline hangs up of its own accord. */
const LEAVE_LINES = {
  idle: 'idleGoodbye',
  shutdown: 'shutdownGoodbye',
  operator: 'operatorGoodbye',
} as const satisfies Record<LeaveReason, PromptName>;

/**
 * What Hotline says as it ends a call itself, and how the call then ends: hung up — or, on
 * shutdown with TRANSFER_TARGET set, handed to a person, so the caller is not simply cut off.
 * Apart from the call, which only carries it out.
 */
export function leaving(reason: LeaveReason, transfer: TransferSetup): { line: PromptName; ending: Ending } {
  const destination = defaultDestination(transfer);
  if (reason === 'shutdown' && destination) return { line: 'shutdownTransfer', ending: { type: 'transfer', destination, cause: reason } };
  return { line: LEAVE_LINES[reason], ending: { type: 'hangup', cause: reason } };
}
