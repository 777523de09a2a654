import { DTMF_KEYS } from '../protocol/events.js';

export type DtmfKeys = { ok: true; keys: string } | { ok: false; problem: string };

/**
 * The keys a caller means to press, as the service names them: upper-case,
 * spaces dropped (`47 11#` reads like a number on paper). Anything that is not
 * on a keypad is named, so a typo is not sent as half a customer number.
 */
export function parseDtmfKeys(raw: string): DtmfKeys {
  const typed = raw.replace(/\s+/g, '');
  if (typed === '') return { ok: false, problem: 'no keys given: name the keys to press, e.g. 4711#' };
  const keys = typed.toUpperCase();
  // Named as typed: an "x" reported as "X" would puzzle whoever typed it.
  const wrong = [...new Set([...typed].filter((key) => !DTMF_KEYS.includes(key.toUpperCase())))];
  if (wrong.length === 0) return { ok: true, keys };
  const named = wrong.map((key) => JSON.stringify(key)).join(', ');
  return { ok: false, problem: `${named} ${wrong.length === 1 ? 'is not a keypad key' : 'are not keypad keys'}: keys are 0-9, *, # and A-D` };
}
