import { ConfigError } from '../errors.js';
import { describeNetworkError } from '../net-errors.js';
import {
  AiFlowAccessDeniedError,
  AiFlowNetworkError,
  AiFlowNoPhoneNumberError,
  AiFlowNotFoundError,
  AiFlowTimeoutError,
  AiFlowUnexpectedResponseError,
  InvalidCallRequestError,
} from './errors.js';
import { normalizePhoneNumber } from '../phone/phone-number.js';

export interface AiFlowClientOptions {
  /** The service API's base URL, without the /v3 prefix. */
  baseUrl: string;
  accessToken: string;
  /** Default 10000. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface StartCallRequest {
  aiFlowId: string;
  billingDevice: string;
  toPhoneNumber: string;
}

export interface StartedCall {
  /** The number as sent: E.164 digits without '+'. */
  toPhoneNumber: string;
  status: 'initiated';
  /** The service's answer; its shape is undocumented, so it is only kept, never relied on. */
  body: unknown;
}

const MIN_REDACTED_LENGTH = 8;
const SUCCESS = new Set([200, 201, 202]); // 201 is documented; the others would still mean "started"

/** Asks the voice service to have an AI flow dial a number. */
export class AiFlowClient {
  private readonly baseUrl: string;
  private readonly accessToken: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: AiFlowClientOptions) {
    this.baseUrl = options.baseUrl.trim().replace(/\/+$/, '');
    let parsed: URL;
    try {
      parsed = new URL(this.baseUrl);
    } catch {
      throw new ConfigError(`The voice service URL "${options.baseUrl}" is not a URL: check AIFLOW_API_URL`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new ConfigError(`The voice service URL must be http(s), not ${parsed.protocol}: check AIFLOW_API_URL`);
    }
    this.accessToken = options.accessToken.trim();
    // fetch quotes a header value it refuses in its error message, which would leak the token.
    if (!/^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/.test(this.accessToken)) {
      throw new ConfigError('AIFLOW_ACCESS_TOKEN is empty or has characters an HTTP header cannot carry');
    }
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** POST {baseUrl}/v3/ai-flows/{aiFlowId}/call; resolves once the service has initiated the call. */
  async startCall(request: StartCallRequest): Promise<StartedCall> {
    const toPhoneNumber = normalizePhoneNumber(request.toPhoneNumber);
    const aiFlowId = request.aiFlowId.trim();
    const billingDevice = request.billingDevice.trim();
    if (!aiFlowId) throw new InvalidCallRequestError('No AI flow id: pass aiFlowId or set AIFLOW_ID');
    if (!billingDevice) throw new InvalidCallRequestError('No billing device: pass billingDevice or set AIFLOW_BILLING_DEVICE');

    const url = `${this.baseUrl}/v3/ai-flows/${encodeURIComponent(aiFlowId)}/call`;
    // One signal for the whole exchange: a service that sends headers and then stalls is as stuck as a silent one.
    const signal = AbortSignal.timeout(this.timeoutMs);
    let status: number;
    let text: string;
    try {
      const response = await this.fetch(url, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${this.accessToken}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: JSON.stringify({ billingDevice, toPhoneNumber }),
        signal,
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      if (signal.aborted) throw new AiFlowTimeoutError(this.timeoutMs);
      throw new AiFlowNetworkError(displayUrl(this.baseUrl), this.redact(describeNetworkError(error)), error);
    }

    if (SUCCESS.has(status)) return { toPhoneNumber, status: 'initiated', body: parseBody(text) };
    const body = this.redact(text);
    switch (status) {
      case 400:
        throw new AiFlowNoPhoneNumberError(aiFlowId, body);
      case 404:
        throw new AiFlowNotFoundError(aiFlowId, body);
      case 401:
      case 403:
        throw new AiFlowAccessDeniedError(aiFlowId, body, status);
      default:
        throw new AiFlowUnexpectedResponseError(aiFlowId, body, status);
    }
  }

  /** Whatever the service or the network says, the token never travels on in an error. */
  private redact(text: string): string {
    // A token this short is a test value; replacing it would garble ordinary words.
    if (this.accessToken.length < MIN_REDACTED_LENGTH) return text;
    return text.split(this.accessToken).join('[redacted]');
  }
}

function parseBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}


/** Credentials in a URL must not reach an error message. */
function displayUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace(/\/+$/, '');
}
