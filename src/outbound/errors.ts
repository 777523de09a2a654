import { HotlineError } from '../errors.js';

/*
 * Every error here carries `status`: the HTTP status Hotline's own API should
 * answer with when the error ends a request. The mapping:
 *
 *   InvalidPhoneNumberError (phone/errors.ts), InvalidCallRequestError → 400  the caller sent something unusable
 *   AiFlowNoPhoneNumberError         (service 400)    → 502  ┐ the caller did nothing wrong: the AI flow,
 *   AiFlowNotFoundError              (service 404)    → 502  │ the token or the account is misconfigured,
 *   AiFlowAccessDeniedError          (service 401/403)→ 502  │ so a 4xx would blame the wrong party.
 *   AiFlowUnexpectedResponseError    (any other)      → 502  ┘ `upstreamStatus` keeps what the service said.
 *   AiFlowTimeoutError                                → 504  the service did not answer in time
 *   AiFlowNetworkError                                → 502  the service could not be reached
 *
 * The call was not placed at all, nothing sent to the service (CallNotPlacedError):
 *   OutboundNotConfiguredError                        → 409  AIFLOW_* settings missing; names them
 *   NumberInCallError                                 → 409  the number is being rung or is on the line
 *   NumberStoppedError                                → 409  the number is on the stop list
 *   ShuttingDownError                                 → 503  Hotline is shutting down
 */


/** A field the service needs is missing; caught before anything is sent. */
export class InvalidCallRequestError extends HotlineError {
  readonly code = 'invalid_call_request';
  readonly status = 400;
}

/** The service answered with an error status; `body` is the start of its answer, for diagnosis. */
export abstract class AiFlowResponseError extends HotlineError {
  readonly status: number = 502;
  readonly body: string;
  constructor(
    readonly upstreamStatus: number,
    readonly aiFlowId: string,
    body: string,
    explanation: string,
  ) {
    const said = excerpt(body.replace(/\s+/g, ' ').trim(), 200);
    super(`${explanation} (HTTP ${upstreamStatus} from the voice service${said ? `: ${said}` : ''})`);
    this.body = body.slice(0, 500);
  }
}

export class AiFlowNoPhoneNumberError extends AiFlowResponseError {
  readonly code = 'aiflow_no_phone_number';
  constructor(aiFlowId: string, body: string, upstreamStatus = 400) {
    super(
      upstreamStatus,
      aiFlowId,
      body,
      `AI flow "${aiFlowId}" has no phone number configured, and outbound calls need one as caller ID: ` +
        'configure a phone number for the AI flow in the dashboard',
    );
  }
}

export class AiFlowNotFoundError extends AiFlowResponseError {
  readonly code = 'aiflow_not_found';
  constructor(aiFlowId: string, body: string, upstreamStatus = 404) {
    super(
      upstreamStatus,
      aiFlowId,
      body,
      `AI flow "${aiFlowId}" does not exist at the voice service: check AIFLOW_ID, ` +
        'and that AIFLOW_API_URL points at the service API',
    );
  }
}

export class AiFlowAccessDeniedError extends AiFlowResponseError {
  readonly code = 'aiflow_access_denied';
  constructor(aiFlowId: string, body: string, upstreamStatus: number) {
    super(
      upstreamStatus,
      aiFlowId,
      body,
      'The voice service refused to start the call: either the access token was rejected, or outbound calls ' +
        "are not enabled for this account yet (the provider's support must enable outbound calls). " +
        'Check AIFLOW_ACCESS_TOKEN',
    );
  }
}

export class AiFlowUnexpectedResponseError extends AiFlowResponseError {
  readonly code = 'aiflow_unexpected_response';
  constructor(aiFlowId: string, body: string, upstreamStatus: number) {
    super(upstreamStatus, aiFlowId, body, `The voice service did not start the call for AI flow "${aiFlowId}"`);
  }
}

export class AiFlowTimeoutError extends HotlineError {
  readonly code = 'aiflow_timeout';
  readonly status = 504;
  constructor(readonly timeoutMs: number) {
    super(`The voice service did not answer within ${timeoutMs} ms; the call may or may not have been started`);
  }
}

export class AiFlowNetworkError extends HotlineError {
  readonly code = 'aiflow_network';
  readonly status = 502;
  constructor(target: string, detail: string, cause: unknown) {
    super(`Could not reach the voice service at ${target}: ${detail} (check AIFLOW_API_URL)`, { cause });
  }
}

/** Hotline refused to place the call itself: nothing reached the voice service. */
export abstract class CallNotPlacedError extends HotlineError {
  abstract readonly status: number;
}

/** What outbound calls need and is not set: the names of the variables, in the order the docs list them. */
export class OutboundNotConfiguredError extends CallNotPlacedError {
  readonly code = 'outbound_not_configured';
  readonly status = 409;
  constructor(readonly missing: readonly string[]) {
    super(
      `outbound calling is not configured: set ${listed(missing)} (see docs/outbound-and-campaigns.md)` +
        (missing.some((name) => name === 'AIFLOW_ID' || name === 'AIFLOW_BILLING_DEVICE')
          ? '; aiFlowId and billingDevice may also be given with the call or the campaign'
          : ''),
    );
  }
}

/** The number is already being rung, or is on the line: one person, one call at a time. */
export class NumberInCallError extends CallNotPlacedError {
  readonly code = 'number_in_call';
  readonly status = 409;
  constructor(
    readonly number: string,
    /** Epoch ms when a request still unanswered stops being waited for; undefined while a call is on the line. */
    readonly until: number | undefined,
  ) {
    super(`${number} is already in a call (being rung, or on the line): it is not called again until that call has ended`);
  }
}

/** The person asked not to be called (do_not_call), or someone put the number on the stop list. */
export class NumberStoppedError extends CallNotPlacedError {
  readonly code = 'number_stopped';
  readonly status = 409;
  constructor(readonly number: string) {
    super(`${number} is on the stop list: it is never called`);
  }
}

/** From the moment shutdown begins nothing new is dialled: the person would reach a Hotline on its way out. */
export class ShuttingDownError extends CallNotPlacedError {
  readonly code = 'shutting_down';
  readonly status = 503;
  constructor() {
    super('Hotline is shutting down: no new call is placed; try again once it has restarted');
  }
}

/** "A", "A and B", "A, B and C". */
function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function excerpt(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
