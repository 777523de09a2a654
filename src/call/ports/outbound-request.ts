/** A call Hotline asked the service to place, waiting for its session_start. */
export interface PendingCall {
  readonly toPhoneNumber: string;
  readonly variables: Readonly<Record<string, string>>;
  /** Who asked for it (a campaign and its contact), kept with the call's record; never spoken. */
  readonly tags?: Readonly<Record<string, string>>;
  readonly requestedAt: number;
}

/**
 * Where the call core finds the request an outbound call's session_start answers: at once from
 * this process's memory, or a moment later from the store (another replica requested it).
 */
export interface OutboundRequestSource {
  /** `sessionId`: the call that answers it, which has the number from now on (none: the call never connected). */
  take(toPhoneNumber: string | undefined, sessionId?: string): PendingCall | Promise<PendingCall | undefined> | undefined;
}
