import type { TransferAction } from '../../protocol/actions.js';
import { parseTransferTarget } from '../turn/tools.js';

/** A named destination, with the caller id its people should see. */
export interface TransferTargetSetup {
  number: string;
  callerIdName?: string | undefined;
  callerIdNumber?: string | undefined;
  timeoutSeconds?: number | undefined;
}

/** Where a call's transfers may go: TRANSFER_* variables and system.md's front matter together. */
export interface TransferSetup {
  defaultTarget: string | undefined;
  targets: Record<string, TransferTargetSetup>;
  callerIdName?: string | undefined;
  callerIdNumber?: string | undefined;
  timeoutSeconds?: number | undefined;
}

/** One transfer about to happen. */
export interface TransferDestination {
  target: string;
  callerIdName?: string | undefined;
  callerIdNumber?: string | undefined;
  timeoutSeconds?: number | undefined;
}

/** Who is on the line, for the caller id a transfer shows. */
export interface CallParties {
  /** The person Hotline talks to: the caller, or the person an outbound call reached. */
  party: string | undefined;
  /** Hotline's own number in this call. */
  line: string | undefined;
}

/** The caller id shown when nothing else is configured: the line is Hotline's, the person who picks up should know it. */
const DEFAULT_CALLER_ID_NAME = 'Hotline';

/** The default destination (TRANSFER_TARGET), with the call-wide caller id settings. */
export function defaultDestination(setup: TransferSetup): TransferDestination | undefined {
  if (!setup.defaultTarget) return undefined;
  return { target: setup.defaultTarget, callerIdName: setup.callerIdName, callerIdNumber: setup.callerIdNumber, timeoutSeconds: setup.timeoutSeconds };
}

/** A named target the model chose, if it is one of ours; otherwise the default destination. */
export function resolveTransfer(argumentsJson: string, setup: TransferSetup): TransferDestination | undefined {
  const named = parseTransferTarget(argumentsJson);
  return (named ? namedDestination(named, setup) : undefined) ?? defaultDestination(setup);
}

/** One of the named targets (TRANSFER_TARGETS), with the call-wide caller id settings where it has none of its own. */
export function namedDestination(name: string, setup: TransferSetup): TransferDestination | undefined {
  if (!Object.hasOwn(setup.targets, name)) return undefined;
  const target = setup.targets[name]!;
  return {
    target: target.number,
    callerIdName: target.callerIdName ?? setup.callerIdName,
    callerIdNumber: target.callerIdNumber ?? setup.callerIdNumber,
    timeoutSeconds: target.timeoutSeconds ?? setup.timeoutSeconds,
  };
}

/**
 * The transfer as both kinds of service read it: the spec's `target`, and the
 * production service's `target_phone_number` with the caller id its SDK
 * requires. The caller id defaults to the caller's own number, so whoever
 * picks up sees who is calling. A destination that is no phone number (a SIP
 * address) goes as `target` alone.
 */
export function transferAction(sessionId: string, destination: TransferDestination, parties: CallParties): TransferAction {
  const number = phoneDigits(destination.target);
  const action: TransferAction = { type: 'transfer', session_id: sessionId, target: destination.target };
  if (number === undefined) return action;
  const callerIdNumber =
    phoneDigits(destination.callerIdNumber ?? '') ?? phoneDigits(parties.party ?? '') ?? phoneDigits(parties.line ?? '') ?? number;
  return {
    ...action,
    target_phone_number: number,
    caller_id_name: destination.callerIdName ?? DEFAULT_CALLER_ID_NAME,
    caller_id_number: callerIdNumber,
    ...(destination.timeoutSeconds === undefined ? {} : { timeout: destination.timeoutSeconds }),
  };
}

/** Digits only, the form the production service uses everywhere (`+49 30 123` → `4930123`); undefined if no phone number. */
export function phoneDigits(text: string): string | undefined {
  const trimmed = text.trim();
  if (!/^\+?[\d\s\-./()]+$/u.test(trimmed)) return undefined;
  const digits = trimmed.replace(/\D/gu, '');
  return digits.length >= 3 ? digits : undefined;
}
