/** An error that becomes an HTTP status and a `{error}` body; its message is safe to show to the client. */
export class HttpError extends Error {
  readonly sessionId: string | undefined;
  /** A 429's Retry-After, in seconds. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly status: number,
    message: string,
    options: { cause?: unknown; sessionId?: string; retryAfterSeconds?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'HttpError';
    this.sessionId = options.sessionId;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
