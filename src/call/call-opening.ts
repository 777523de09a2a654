/**
 * How a call begins: who is on the line, the call's prompts and record made for them, the caller
 * looked up, the greeting — or, for a call adopted from a restart or another replica, its past put
 * back instead of a greeting. Apart from the call's state machine: this runs once, before any turn.
 */
import type { Logger } from '../logger.js';
import { maskedOrNone } from '../phone/mask-number.js';
import type { Session } from '../protocol/events.js';
import type { CallDeps, TakenRequest } from './call-deps.js';
import type { CallLanguage } from './call-language.js';
import type { CallPrompts } from './call-prompts.js';
import type { CallRecord } from './call-record.js';
import type { CallParties } from './ending/transfer.js';
import type { History } from './history.js';
import { lookUpCaller } from './input/caller-context.js';
import type { CallActivityTracker } from './ports/call-activity.js';
import type { CallerContextSource } from './ports/business-tools.js';
import type { PendingCall } from './ports/outbound-request.js';
import type { PriorCall } from './ports/prior-call.js';
import type { CallSpeech } from './speech/call-speech.js';
import { Reply } from './speech/reply.js';

/** What the opening of a call needs of it. */
export interface CallOpeningHost {
  readonly id: string;
  readonly log: Logger;
  readonly deps: CallDeps;
  readonly prompts: CallPrompts;
  readonly record: CallRecord;
  readonly activity: CallActivityTracker;
  readonly history: History;
  readonly speech: CallSpeech;
  readonly language: CallLanguage;
  /** True once the call is over: a start that comes late begins nothing. */
  ended(): boolean;
  /** An outbound call: a mailbox may answer it, and is listened for. */
  watchForMailbox(voicemail: NonNullable<CallDeps['voicemail']>): void;
}

type SessionParties = Pick<Session, 'direction' | 'from_phone_number' | 'to_phone_number'>;

export class CallOpening {
  private who: CallParties = { party: undefined, line: undefined };

  constructor(private readonly host: CallOpeningHost) {}

  /** Who is on the line, for a transfer's caller id; nobody until the call has begun. */
  get parties(): CallParties {
    return this.who;
  }

  /** The call started (its session_start): what the caller's events wait for, if anything. */
  start(session: Session): Promise<void> | undefined {
    const outbound = session.direction === 'outbound';
    const taken = this.host.deps.started(session);
    if (!(taken instanceof Promise)) return this.begin(session, outbound, taken);
    // Requested by another replica: its variables come from the store, and the caller's events wait for them.
    return taken.then((found) => this.begin(session, outbound, found));
  }

  /** An adopted call: its past (the transcript on disk, the store's record) put back once it has been read. */
  adopt(session: Session, prior: Promise<PriorCall | undefined | 'ended'>): Promise<void> {
    return prior.then(
      // An ended call is not opened again: the registry has dropped this one.
      (past) => (past === 'ended' ? undefined : this.restore(session, past)),
      (error: unknown) => {
        this.host.log.error({ err: error }, 'the transcript of an adopted call could not be read; going on without it');
        this.restore(session, undefined);
      },
    );
  }

  /** The call begins, as whoever requested it asked; what the greeting waits for, if anything. */
  private begin(session: Session, outbound: boolean, taken: TakenRequest | undefined): Promise<void> | undefined {
    const { host } = this;
    if (host.ended()) return undefined;
    const request = taken?.request;
    this.beginCall(session, request);
    if (outbound && host.deps.voicemail) host.watchForMailbox(host.deps.voicemail);
    host.log.info(
      // Masked: a log is no place for whole numbers (the record and the transcript keep them).
      { direction: session.direction, from: maskedOrNone(session.from_phone_number), to: maskedOrNone(session.to_phone_number), requested: !!request },
      'call started',
    );
    host.deps.transcript.append({
      role: 'event',
      text: 'session_start',
      call_id: host.record.callId,
      direction: session.direction,
      from: session.from_phone_number,
      to: session.to_phone_number,
      ...(request ? { variables: request.variables } : {}),
    });
    const context = host.deps.callerContext;
    const ready = [taken?.recorded, context && this.lookUpCaller(context)].filter((p): p is Promise<void> => p !== undefined);
    if (ready.length === 0) {
      this.greet(outbound, request);
      return undefined;
    }
    return Promise.all(ready).then(() => this.greet(outbound, request));
  }

  /** An adopted call goes on from its past as written (the transcript, the store's record), or from nothing. */
  private restore(session: Session, past: PriorCall | undefined): void {
    const { host } = this;
    const known = past?.session;
    this.beginCall(
      {
        direction: known?.direction ?? session.direction,
        from_phone_number: known?.from ?? session.from_phone_number,
        to_phone_number: known?.to ?? session.to_phone_number,
      },
      past?.variables ? { variables: past.variables } : undefined,
      { language: past?.record?.language },
    );
    for (const line of past?.lines ?? []) {
      if (line.role === 'user') host.history.addUser(line.text);
      else host.history.addReply(Reply.heard(line.text));
    }
    // The same call as before the restart (or at the replica that had it): the same record.
    if (past?.record) host.record.continueFrom(past.record);
    else if (past?.callId) host.record.continueAs(past.callId);
    const restored = past?.lines.length ?? 0;
    host.log.info({ restored, transcript: past !== undefined }, 'call adopted: an event for a session this process did not know');
    host.deps.transcript.append({ role: 'event', text: 'session_adopted', restored, call_id: host.record.callId });
  }

  /** The call's variables and system prompt, once it is known who is on the line. */
  private beginCall(session: SessionParties, request: Pick<PendingCall, 'variables' | 'tags'> | undefined, restoring?: { language: string | undefined }): void {
    const { host } = this;
    const outbound = session.direction === 'outbound';
    // The language first: the greeting and the system prompt are rendered in it.
    if (restoring) host.language.restore(restoring.language);
    else host.language.begin(!outbound, session.to_phone_number, request?.variables.language);
    host.prompts.begin(session, request?.variables);
    const parties = { direction: outbound ? ('outbound' as const) : ('inbound' as const), from: session.from_phone_number, to: session.to_phone_number };
    host.record.began(parties, request);
    host.activity.began(host.id, parties);
    this.who = outbound
      ? { party: session.to_phone_number, line: session.from_phone_number }
      : { party: session.from_phone_number, line: session.to_phone_number };
  }

  /** The caller's record fills the greeting and the system prompt — if it comes within its time limit. */
  private async lookUpCaller(context: CallerContextSource): Promise<void> {
    const { host } = this;
    const { fields, durationMs } = await lookUpCaller(context, host.prompts.variables, host.log);
    host.deps.transcript.append({ role: 'event', text: 'caller_context', fields: Object.keys(fields), duration_ms: durationMs });
    host.prompts.addContext(fields);
  }

  private greet(outbound: boolean, request: PendingCall | undefined): void {
    const [name, text] = this.host.prompts.greeting(outbound, request);
    this.host.speech.text(text, this.host.prompts.style(name), {});
  }
}
