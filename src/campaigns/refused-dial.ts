import { NumberInCallError, type CallNotPlacedError } from '../outbound/errors.js';

/**
 * A contact whose number another call has — at this replica or another — is looked at again this
 * soon at the latest: a call ending at another replica sends no event here, and a ring may end
 * before its time runs out (answered there, or given up).
 */
export const LOOK_AGAIN_MS = 2_000;
/** The least a refused contact waits, whatever the refusal says: no refusal, however it comes, is retried in a loop. */
const LEAST_WAIT_MS = 250;

/**
 * When a contact whose dial was refused at `now` is due again: when the ring that holds its number
 * runs out, or a look later, whichever is sooner — and never at once.
 */
export function dueAgainAt(refusal: CallNotPlacedError, now: number): number {
  const until = refusal instanceof NumberInCallError ? refusal.until : undefined;
  return until === undefined ? now + LOOK_AGAIN_MS : Math.max(now + LEAST_WAIT_MS, Math.min(until + 1, now + LOOK_AGAIN_MS));
}
