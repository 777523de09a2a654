import { HotlineError } from '../errors.js';

/*
 * Every error here carries `status`: the HTTP status Hotline's own API should
 * answer with when the error ends a request. The mapping:
 *
 *   InvalidPhoneNumberError, InvalidCallRequestError  → 400  the caller sent something unusable
 *   AiFlowNoPhoneNumberError         (service 400)    → 502  ┐ the caller did nothing wrong: the AI flow,
 *   AiFlowNotFoundError              (service 404)    → 502  │ the token or the account is misconfigured,
 *   AiFlowAccessDeniedError          (service 401/403)→ 502  │ so a 4xx would blame the wrong party.
 *   AiFlowUnexpectedResponseError    (any other)      → 502  ┘ `upstreamStatus` keeps what the service said.
 *   AiFlowTimeoutError                                → 504  the service did not answer in time
 *   AiFlowNetworkError                                → 502  the service could not be reached
 */

/** The number cannot be turned into E.164; the message says what is wrong with it. */
export class InvalidPhoneNumberError extends HotlineError {
  readonly code = 'invalid_phone_number';
  readonly status = 400;
  constructor(
    readonly input: string,
    reason: string,
  ) {
    super(`Invalid phone number "${excerpt(input, 40)}": ${reason}`);
  }
}

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

function excerpt(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
