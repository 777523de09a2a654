/**
 * Places a scenario's call: for an outbound call, first the request through
 * Hotline's POST /api/calls (as `npm run call` does), then the voice service
 * connects and sends session_start.
 */
import { randomUUID } from 'node:crypto';
import { FakeVoiceService, type PlaybackMode } from '../testing/voice-service-client.js';
import type { CallSpec } from './schema.js';
import type { CallTarget } from './stack.js';

const CALLER = '4915112345678';
const BUSINESS = '4930123456';
const OUTBOUND_DEFAULT_TO = '+49 151 1234567';

export interface RungCall {
  service: FakeVoiceService;
  /** The session_start's `session`, kept so that the start step can send it again unchanged (a duplicate). */
  session: Record<string, string>;
}

/** `language`: the scenario's; an outbound call's request asks for it. */
export async function ring(target: CallTarget, call: CallSpec, sessionName: string, language?: string): Promise<RungCall> {
  const session: Record<string, string> =
    call.direction === 'outbound'
      ? {
          direction: 'outbound',
          phone_number: call.from ?? BUSINESS,
          from_phone_number: call.from ?? BUSINESS,
          to_phone_number: await requestOutboundCall(target, call, language),
        }
      : {
          direction: 'inbound',
          phone_number: call.to ?? BUSINESS,
          from_phone_number: call.from ?? CALLER,
          to_phone_number: call.to ?? BUSINESS,
        };
  const service = await FakeVoiceService.connect(target.wsUrl, {
    playback: playbackMode(call),
    sessionId: `${sessionName}-${randomUUID().slice(0, 8)}`,
  });
  service.start(session);
  return { service, session };
}

/** Returns the number as Hotline normalised it: the service rings with that one. */
async function requestOutboundCall(target: CallTarget, call: CallSpec, language: string | undefined): Promise<string> {
  // The request's `language` variable is the language the call starts in (as a campaign's column is).
  const variables = { ...call.variables, ...(language === undefined ? {} : { language }) };
  const response = await fetch(`${target.url}/api/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.adminToken}` },
    body: JSON.stringify({ toPhoneNumber: call.to ?? OUTBOUND_DEFAULT_TO, variables }),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST /api/calls answered ${response.status}: ${text}`);
  const body: unknown = JSON.parse(text);
  if (body && typeof body === 'object' && 'toPhoneNumber' in body && typeof body.toPhoneNumber === 'string') {
    return body.toPhoneNumber;
  }
  throw new Error(`POST /api/calls answered without toPhoneNumber: ${text}`);
}

function playbackMode(call: CallSpec): PlaybackMode {
  if (call.playback === 'manual') return { kind: 'manual' };
  if (call.playback === 'none') return { kind: 'none' };
  return call.ms_per_char === undefined ? { kind: 'auto' } : { kind: 'auto', msPerChar: call.ms_per_char };
}
