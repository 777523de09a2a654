import { randomUUID } from 'node:crypto';
import { addUsage, type TokenUsage } from '../llm/usage.js';
import type { CallEndReason, CallSoFar, CallSummary, HeardLine, KnowledgeRef, ToolRunSummary, TurnSummary } from './ports/call-summary.js';
import type { KnowledgeFinding, KnowledgePassage } from './ports/knowledge.js';
import type { Reply } from './speech/reply.js';
import { keepWords, type Redact } from './ports/redaction.js';
import type { ToolRunRecord } from './turn/tool-loop.js';

/** Why Hotline itself ended a call (hung up or handed it over): it decides how the call is said to have ended. */
export type EndingCause = 'model' | 'silence' | 'give_up' | 'idle' | 'shutdown' | 'voicemail' | 'operator';

/** A turn's figures, each in ms from the caller's words (`wordsAt`, performance.now()). */
interface TurnStats {
  readonly at: string;
  readonly wordsAt: number;
  /** The turn's reply: whether the caller cut it is read from it at the end. */
  readonly reply: Reply;
  llmRequestMs?: number;
  llmFirstTokenMs?: number;
  firstSpeakMs?: number;
  playbackStartedMs?: number;
  playbackEndedMs?: number;
  failed: boolean;
  tokens?: TokenUsage;
  model?: string;
  costUsd?: number;
  knowledge?: { ms: number; passages: KnowledgeRef[] };
}

/** Who called whom, as the call's record has it. */
type Session = Pick<CallSummary, 'direction' | 'from' | 'to'>;

const TIMELINE = ['llmRequestMs', 'llmFirstTokenMs', 'firstSpeakMs', 'playbackStartedMs', 'playbackEndedMs'] as const;
type TimelineMark = (typeof TIMELINE)[number];

/** What a call's summary is made of, collected as the call goes. */
export class CallRecord {
  private startedAt = new Date();
  private session: Session = {
    direction: 'inbound',
    from: undefined,
    to: undefined,
  };
  private request: { variables: Readonly<Record<string, string>>; tags: Readonly<Record<string, string>> | undefined } | undefined;
  private readonly turns: TurnStats[] = [];
  /** The turns of the call's earlier life at another replica (or before a restart), as that one recorded them. */
  private earlierTurns: readonly TurnSummary[] = [];
  private bargeIns = 0;
  private readonly toolRuns: ToolRunSummary[] = [];
  /** The last call-ending action Hotline sent, and why. */
  private ending: { type: 'hangup' | 'transfer'; cause: EndingCause } | undefined;

  /** The call's own id: the service may use a session id again for a later call. */
  private id: string = randomUUID();
  /** The language the call is in, when the prompts have languages. */
  private spoken: string | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly transcript: { readonly file: string },
    /** Told when the record changes in a way worth writing down at once (see CallObserver.callProgress). */
    private readonly changed: () => void = () => {},
    /** The conversation as heard so far, read when the record is. */
    private readonly heard: () => readonly HeardLine[] = () => [],
    /** A reply heard in full is a change worth writing at once (see CallDeps.recordEachReply). */
    private readonly recordEachReply = false,
    /** What the record keeps of a tool's arguments: the model may pass on what the caller said. */
    private readonly redact: Redact = keepWords,
  ) {}

  get callId(): string {
    return this.id;
  }

  /** The call goes on from before a restart (adopted): it keeps the id it had, so its record is the same. */
  continueAs(callId: string): void {
    this.id = callId;
  }

  /**
   * The call goes on from its record at another replica (or before a restart): the same id, start,
   * turns, tool runs and barge-ins, so the one record of the call loses nothing of its earlier life.
   */
  continueFrom(earlier: CallSoFar): void {
    this.id = earlier.callId;
    const startedAt = new Date(earlier.startedAt);
    if (!Number.isNaN(startedAt.getTime())) this.startedAt = startedAt;
    this.earlierTurns = earlier.turns;
    this.toolRuns.unshift(...earlier.toolRuns);
    this.bargeIns += earlier.bargeIns;
    this.spoken ??= earlier.language;
    if (earlier.variables || earlier.tags) {
      this.request = { variables: this.request?.variables ?? earlier.variables ?? {}, tags: this.request?.tags ?? earlier.tags };
    }
  }

  /**
   * True when Hotline let go of the call without it having ended at the service: no hangup or
   * transfer went out and the service did not end it (Hotline shut down, the connection broke).
   * The service may still send its events, to a restarted Hotline that then adopts it.
   */
  leftOpen(origin: 'service' | 'hotline'): boolean {
    return origin === 'hotline' && this.ending === undefined;
  }

  began(
    session: Session,
    request: { variables: Readonly<Record<string, string>>; tags?: Readonly<Record<string, string>> | undefined } | undefined,
  ): void {
    this.session = session;
    if (request) this.request = { variables: request.variables, tags: request.tags };
    this.changed();
  }

  /** The call is in `language` from now on (its start, or the caller switched). */
  language(language: string): void {
    if (this.spoken === language) return;
    this.spoken = language;
    this.changed();
  }

  /** A turn began for words that arrived at `wordsAt` (performance.now()); `mark` and `turnFailed` fill it in as it goes. */
  turn(reply: Reply, wordsAt: number): void {
    const now = performance.now();
    this.turns.push({ at: new Date(Date.now() - (now - wordsAt)).toISOString(), wordsAt, reply, failed: false, llmRequestMs: now - wordsAt });
    this.changed();
  }

  /** The latest turn failed: the caller heard the apology. */
  turnFailed(): void {
    const stats = this.turns.at(-1);
    if (stats) stats.failed = true;
  }

  /** Marks a moment of the latest turn, the first time it happens. */
  mark(mark: TimelineMark): void {
    const stats = this.turns.at(-1);
    if (!stats || stats[mark] !== undefined) return;
    // Playback belongs to the reply only once the reply has sent speech.
    if ((mark === 'playbackStartedMs' && stats.firstSpeakMs === undefined) || (mark === 'playbackEndedMs' && stats.playbackStartedMs === undefined)) return;
    stats[mark] = performance.now() - stats.wordsAt;
    // The reply is heard in full now: the conversation on record has it, for a replica taking the call up.
    if (mark === 'playbackEndedMs' && this.recordEachReply) this.changed();
  }

  /**
   * One of the turn's LLM requests ended with the server's count of its tokens. No write of its
   * own: the counts go with the record's next one (a turn, a tool run, the call's end).
   */
  tokensUsed(reply: Reply, usage: TokenUsage, model: string, costUsd: number | undefined): void {
    const stats = this.turns.findLast((turn) => turn.reply === reply);
    if (!stats) return;
    stats.tokens = addUsage(stats.tokens, usage);
    stats.model = model;
    if (costUsd !== undefined) stats.costUsd = (stats.costUsd ?? 0) + costUsd;
  }

  /** The turn of `reply` was given these passages of the business's documents (none: it was told nothing matches). */
  knowledgeGiven(reply: Reply, finding: KnowledgeFinding): void {
    const stats = this.turns.findLast((turn) => turn.reply === reply);
    if (!stats) return;
    stats.knowledge = {
      ms: Math.round(finding.ms * 1000) / 1000,
      passages: finding.passages.map((p) => ({
        source: p.source,
        heading: p.heading,
        line: p.line,
        ...(p.page !== undefined ? { page: p.page } : {}),
        score: Math.round(p.score * 10_000) / 10_000,
        used: false,
      })),
    };
  }

  /** Of the passages the turn of `reply` was given, these were drawn on by what it said. */
  knowledgeUsed(reply: Reply, used: readonly KnowledgePassage[]): void {
    const stats = this.turns.findLast((turn) => turn.reply === reply);
    if (!stats?.knowledge) return;
    for (const ref of stats.knowledge.passages) ref.used = used.some((p) => p.source === ref.source && p.line === ref.line && p.page === ref.page);
  }

  bargedIn(): void {
    this.bargeIns += 1;
    this.changed();
  }

  toolRan(run: ToolRunRecord): void {
    this.toolRuns.push({ name: run.name, arguments: this.redact(run.arguments), outcome: run.outcome, durationMs: run.durationMs, reused: run.reused });
    this.changed();
  }

  endingSent(type: 'hangup' | 'transfer', cause: EndingCause): void {
    this.ending = { type, cause };
    this.changed();
  }

  /** A transfer nobody answered brought the call back: it has not ended that way after all. */
  endingUndone(): void {
    this.ending = undefined;
    this.changed();
  }

  summary(reason: string, origin: 'service' | 'hotline'): CallSummary {
    const endedAt = new Date();
    return {
      ...this.soFar(),
      endedAt: endedAt.toISOString(),
      durationMs: endedAt.getTime() - this.startedAt.getTime(),
      endReason: this.endReasonOf(reason, origin),
      serviceReason: origin === 'service' && reason !== 'session_end' ? reason : undefined,
    };
  }

  /** The record as it stands, the call still going. */
  soFar(): CallSoFar {
    return {
      callId: this.id,
      sessionId: this.sessionId,
      direction: this.session.direction,
      from: this.session.from,
      to: this.session.to,
      startedAt: this.startedAt.toISOString(),
      serviceReason: undefined,
      turns: [...this.earlierTurns, ...this.turns.map((stats): TurnSummary => {
        const timeline: { -readonly [K in TimelineMark]?: number } = {};
        for (const mark of TIMELINE) {
          const ms = stats[mark];
          if (ms !== undefined) timeline[mark] = Math.round(ms * 10) / 10;
        }
        return {
          at: stats.at,
          ...timeline,
          interrupted: stats.reply.interrupted,
          failed: stats.failed,
          ...(stats.tokens ? { tokens: stats.tokens } : {}),
          ...(stats.model ? { model: stats.model } : {}),
          ...(stats.costUsd !== undefined ? { costUsd: stats.costUsd } : {}),
          ...(stats.knowledge ? { knowledge: { ms: stats.knowledge.ms, passages: stats.knowledge.passages.map((p) => ({ ...p })) } } : {}),
        };
      })],
      bargeIns: this.bargeIns,
      toolRuns: [...this.toolRuns],
      variables: this.request?.variables,
      tags: this.request?.tags,
      transcriptFile: this.transcript.file,
      conversation: this.heard(),
      language: this.spoken,
    };
  }

  /** How the call ended, for its record: `reason` and `origin` as the call's end was told. */
  endReasonOf(reason: string, origin: 'service' | 'hotline'): CallEndReason {
    // Hotline's own reasons for ending a call win over whoever closed the line after it.
    if (reason === 'idle_timeout') return 'idle';
    if (reason === 'shutdown') return 'shutdown';
    const ending = this.ending;
    if (ending) {
      switch (ending.cause) {
        case 'model':
          return ending.type === 'transfer' ? 'transferred' : 'agent_hung_up';
        case 'give_up':
          return 'error';
        case 'idle':
          return 'idle';
        case 'operator':
          return ending.type === 'transfer' ? 'operator_transferred' : 'operator_hung_up';
        default:
          return ending.cause;
      }
    }
    // An operator's hangup whose goodbye outlasted its time limit: the call was still theirs to end.
    if (reason === 'operator') return 'operator_hung_up';
    return origin === 'service' ? 'caller_hung_up' : 'connection_lost';
  }
}
