/**
 * How a report webhook is signed, for Hotline and for whoever receives it:
 *
 *   X-Hotline-Timestamp: <unix seconds>
 *   X-Hotline-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" keyed with REPORT_WEBHOOK_SECRET>
 *
 * The timestamp is signed with the body, so a recorded request cannot be
 * replayed later than the receiver's tolerance.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'sha256=';
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
/** How old (or how far ahead, for a receiver whose clock is behind) a timestamp may be. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60 * 1000;

/** The X-Hotline-Signature value for `body` sent at `timestamp` (unix seconds). */
export function signBody(secret: string, timestamp: number, body: string): string {
  return `${PREFIX}${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * True if `signatureHeader` is the signature of `body` at `timestamp` and the
 * timestamp is within 5 minutes of now. The comparison takes the same time
 * whatever the header holds, so it cannot be guessed byte by byte.
 */
export function verifySignature(
  secret: string,
  timestamp: string | number,
  body: string,
  signatureHeader: string | undefined,
  { now = Date.now(), toleranceMs = SIGNATURE_TOLERANCE_MS }: { now?: number; toleranceMs?: number } = {},
): boolean {
  const seconds = typeof timestamp === 'number' ? timestamp : /^\d{1,15}$/.test(timestamp.trim()) ? Number(timestamp) : NaN;
  if (!Number.isSafeInteger(seconds)) return false;
  if (Math.abs(now - seconds * 1000) > toleranceMs) return false;
  const hex = signatureHeader?.trim().startsWith(PREFIX) ? signatureHeader.trim().slice(PREFIX.length) : '';
  if (!HEX_SHA256.test(hex)) return false;
  const expected = Buffer.from(signBody(secret, seconds, body).slice(PREFIX.length), 'hex');
  return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
}
