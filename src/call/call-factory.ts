/**
 * How one call is made, apart from the registry that keeps the calls in progress (call-registry.ts):
 * everything a Call needs, read from the options of the moment — the prompts, its tools and transfer
 * targets (worked out once per prompt version), its transcript's file, its trace, the outbound
 * request it answers — and, for a call this process never saw start, its record from before. It
 * exists so that the registry is about the calls' lives (their events, endings and shutdown), and so
 * that neither grows past reading.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Logger } from '../logger.js';
import type { Llm } from '../llm/llm.js';
import type { PromptSet } from '../prompts/prompt-store.js';
import type { VoiceEvent } from '../protocol/events.js';
import { Call } from './call.js';
import type { ActionSink, CallDeps, CallSettings, SpeechPacing, TakenRequest } from './call-deps.js';
import type { TransferSetup } from './ending/transfer.js';
import type { VoicemailTiming } from './input/voicemail-watch.js';
import type { BusinessConnections, CallerContextSource, ToolBox } from './ports/business-tools.js';
import type { CallActivityObserver } from './ports/call-activity.js';
import type { CallMetrics } from './ports/call-metrics.js';
import type { CallObserver, CallSoFar, VoicemailDetector } from './ports/call-summary.js';
import type { OutboundRequestSource, PendingCall } from './ports/outbound-request.js';
import { withRecord, type PriorCall } from './ports/prior-call.js';
import type { CallerLines, Redact } from './ports/redaction.js';
import { NO_CALL_TRACING, type CallTracing } from './ports/tracing.js';
import type { Transcripts } from './ports/transcript.js';
import { tellStarted } from './started-record.js';
import { toolDefinitions } from './turn/tools.js';

export interface CallFactoryOptions {
  llm: Llm;
  /** The current prompts; read once per call, so edits apply from the next call. */
  prompts: () => PromptSet;
  pendingCalls: OutboundRequestSource;
  transcripts: Transcripts;
  /** TRANSFER_* variables: the default destination, named ones (name → number), and the caller id to show. */
  transfer: {
    defaultTarget: string | undefined;
    targets: Record<string, string>;
    callerIdName?: string | undefined;
    callerIdNumber?: string | undefined;
    timeoutSeconds?: number | undefined;
  };
  settings: CallSettings;
  /** The business's own tools (HTTP tool files, MCP servers). */
  toolBox?: ToolBox | undefined;
  /** Connections to the business systems, opened before a turn may need them. */
  businessConnections?: BusinessConnections | undefined;
  /** The caller-context lookup as configured now; read once per call. */
  callerContext?: (() => CallerContextSource | undefined) | undefined;
  /** Told of every call once it has ended and its transcript is on disk (reports, campaigns). */
  observer?: CallObserver | undefined;
  /** How long a greeting waits for the observer to record the call's start; default STARTED_RECORD_WAIT_MS (a test holding a lock sets it longer). */
  startedRecordWaitMs?: number | undefined;
  /** Told of every call's phase and latest words as they change (the dashboard's live view). */
  activity?: CallActivityObserver | undefined;
  /** Tells an outbound call's first words from a mailbox; without it every call is taken for a person. */
  voicemail?: { detector: VoicemailDetector; timing: VoicemailTiming } | undefined;
  /**
   * A call this process never saw start: its record elsewhere — handed over by a stopping replica,
   * or in the store (a replica killed, an earlier start) — so it goes on as the caller heard it,
   * as the same record. Without it only the transcript on this disk is read.
   */
  earlierLife?: ((sessionId: string) => Promise<PriorCall | undefined>) | undefined;
  /** Another replica may take a call up from its record: each reply is recorded as soon as it has played (CallDeps). */
  recordEachReply?: boolean | undefined;
  /** What a model's tokens cost (CallDeps.prices). */
  prices?: CallDeps['prices'];
  /** The business's documents (CallDeps.knowledge). */
  knowledge?: CallDeps['knowledge'];
  /** CallDeps.languageDetector. */
  languageDetector?: CallDeps['languageDetector'];
  /** Personal data out of every word written (CallDeps.redact), and out of the model's too with `fromModel`. */
  redaction?: { redact: Redact; fromModel: boolean; callerLines?: () => CallerLines } | undefined;
  /** Where each call is traced (OpenTelemetry); nothing without. */
  tracing?: CallTracing | undefined;
  logger: Logger;
  metrics: CallMetrics;
}

/** Per transport: whether a `barge_in` action can be followed by the speak it makes room for (see CallDeps). */
export interface DispatchOptions {
  pacing: SpeechPacing;
  canStopPlayback: boolean;
}

interface CallSetup {
  tools: ChatCompletionTool[];
  transfer: TransferSetup;
}

export class CallFactory {
  /** Tools and transfer targets depend on the prompt version; computed once per version. */
  private readonly setups = new WeakMap<PromptSet, CallSetup>();

  constructor(private readonly options: CallFactoryOptions) {}

  transferTargets(): { default: boolean; named: string[] } {
    const { transfer } = this.setupFor(this.options.prompts());
    return { default: transfer.defaultTarget !== undefined, named: Object.keys(transfer.targets) };
  }

  /**
   * The call of session `id`: a new one when `starting`, else one adopted from its record — the
   * transcript here and its record elsewhere (`known`, when already read). An adopted call whose
   * record says it ended is not opened again: `ended` is told, to drop it.
   */
  make(
    id: string,
    sink: ActionSink,
    { pacing, canStopPlayback }: DispatchOptions,
    session: VoiceEvent['session'],
    starting: boolean,
    ended: (call: Call) => void,
    known?: PriorCall,
  ): Call {
    const trace = (this.options.tracing ?? NO_CALL_TRACING).call({
      sessionId: id,
      direction: session.direction === 'outbound' ? 'outbound' : 'inbound',
      from: session.from_phone_number,
      to: session.to_phone_number,
      adopted: !starting,
    });
    // Each line of the call's log names its trace, so a log line leads to the call's spans and back.
    const logger = this.options.logger.child(trace.logFields ? { sessionId: id, ...trace.logFields } : { sessionId: id });
    const { transcripts } = this.options;
    // Which file is this call's is known a moment later; its first lines wait in memory meanwhile.
    const placement = transcripts.place(id, starting).catch((error: unknown) => {
      logger.error({ err: error }, 'the transcripts of this session id could not be read; writing to its first file');
      return { file: transcripts.fileOf(id), prior: undefined };
    });
    const prompts = this.options.prompts();
    const { tools, transfer } = this.setupFor(prompts);
    const { pendingCalls } = this.options;
    const call = new Call(id, sink, {
      llm: this.options.llm,
      prompts,
      tools,
      toolBox: this.options.toolBox,
      callerContext: this.options.callerContext?.(),
      businessConnections: this.options.businessConnections,
      voicemail: this.options.voicemail,
      transfer,
      started: ({ direction, from_phone_number: from, to_phone_number: to }) => {
        // Told before the greeting: a requester that dies now still knows the call was answered, and no replica dials the person on the line.
        const started = (request: PendingCall | undefined): TakenRequest => ({
          request,
          recorded: tellStarted(this.options.observer, { sessionId: id, direction: direction === 'outbound' ? 'outbound' : 'inbound', from, to, tags: request?.tags }, this.options.logger, this.options.startedRecordWaitMs),
        });
        const taken = direction === 'outbound' ? pendingCalls.take(to, id) : undefined;
        return taken instanceof Promise ? taken.then(started) : started(taken);
      },
      settings: this.options.settings,
      pacing,
      canStopPlayback,
      logger,
      transcript: transcripts.open(
        id,
        logger,
        placement.then((placed) => placed.file),
      ),
      metrics: this.options.metrics,
      activity: this.options.activity,
      progress: this.options.observer?.callProgress && ((soFar) => this.tellProgress(soFar)),
      recordEachReply: this.options.recordEachReply,
      prices: this.options.prices,
      knowledge: this.options.knowledge,
      languageDetector: this.options.languageDetector,
      ...(this.options.redaction && { redact: this.options.redaction.redact, redactFromModel: this.options.redaction.fromModel }),
      callerLines: this.options.redaction?.callerLines?.(),
      trace,
    });
    if (starting) return call;
    const elsewhere = (known ? Promise.resolve(known) : this.options.earlierLife?.(id))?.catch((error: unknown) => {
      logger.warn({ err: error }, 'the record of this call could not be read from the store; going on from the transcript here');
      return undefined;
    });
    call.adopt(
      session,
      Promise.all([placement, elsewhere]).then(([placed, stored]) => {
        const prior = withRecord(placed.prior, stored);
        if (!prior?.ended) return prior;
        ended(call);
        return 'ended' as const;
      }),
    );
    return call;
  }

  private tellProgress(call: CallSoFar): void {
    try {
      this.options.observer?.callProgress?.(call);
    } catch (error) {
      this.options.logger.error({ err: error, sessionId: call.sessionId }, 'recording the call in progress failed');
    }
  }

  private setupFor(prompts: PromptSet): CallSetup {
    let setup = this.setups.get(prompts);
    if (!setup) {
      const env = this.options.transfer;
      const front = prompts.settings;
      // Named targets from the system prompt's front matter add to (and override) TRANSFER_TARGETS;
      // its caller id settings override TRANSFER_CALLER_ID_*.
      const targets: TransferSetup['targets'] = {};
      for (const [name, number] of Object.entries(env.targets)) targets[name] = { number };
      Object.assign(targets, front.transferTargets);
      setup = {
        tools: toolDefinitions(Object.keys(targets)),
        transfer: {
          defaultTarget: env.defaultTarget,
          targets,
          callerIdName: front.transfer.callerIdName ?? env.callerIdName,
          callerIdNumber: front.transfer.callerIdNumber ?? env.callerIdNumber,
          timeoutSeconds: front.transfer.timeoutSeconds ?? env.timeoutSeconds,
        },
      };
      this.setups.set(prompts, setup);
    }
    return setup;
  }
}
