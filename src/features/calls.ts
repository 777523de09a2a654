/**
 * The calls: every call of this process (the registry), each one's record as it happens (written
 * to the store, journalled first so a killed process leaves it behind), the numbers a call was
 * requested for, and — among replicas on one PostgreSQL — the webhook calls' owners and their
 * handover between turns when this replica stops.
 */
import type { CallDeps } from '../call/call-deps.js';
import { CallObservers } from '../call/call-observers.js';
import { CallRegistry } from '../call/call-registry.js';
import type { ToolBox } from '../call/ports/business-tools.js';
import { priorCallOf } from '../call/ports/prior-call.js';
import type { CallObserver, CallSummary } from '../call/ports/call-summary.js';
import type { CampaignStore } from '../campaigns/definition.js';
import { ClusterControl } from '../cluster/cluster-control.js';
import { WebhookHandover } from '../cluster/webhook-handover.js';
import type { WebhookOwners } from '../cluster/webhook-owners.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { OutboundRequests } from '../outbound/outbound-requests.js';
import { PendingCalls } from '../outbound/pending-calls.js';
import { callerRedactionOf } from '../privacy/redactor-of.js';
import type { ReportService } from '../reports/report-service.js';
import { CallRepository } from '../store/call-repository.js';
import { CallWriter } from '../store/call-writer.js';
import { cutOffCallsInProgress } from '../store/cut-off-calls.js';
import { OutboundRequestRepository } from '../store/outbound-request-repository.js';
import { storeJournalDir } from '../store/store-journal-dir.js';
import { WriteJournal } from '../store/write-journal.js';
import { combineToolBoxes } from '../tools/combined-toolbox.js';
import { businessConnections } from '../tools/http-call.js';
import { WebhookCalls } from '../transport/webhook-calls.js';
import type { CallFiles } from './call-files.js';
import type { LiveView } from './live-view.js';
import type { Model } from './model.js';
import type { OpenedStack } from './opened.js';
import type { StoreFeature } from './store.js';
import type { Telemetry } from './telemetry.js';
import type { Tools } from './tools.js';
import type { Knowledge } from './knowledge.js';
import { DEFAULT_MIN_CONFIDENCE, detectLanguage } from '../language/detect.js';

/** How long a stopping Hotline waits for the database to take the last records; the rest wait in the journal. */
const RECORDS_CLOSE_MS = 5_000;

export interface CallsParts {
  readonly files: CallFiles;
  readonly model: Model;
  readonly telemetry: Telemetry;
  readonly tools: Tools;
  readonly voicemail: CallDeps['voicemail'];
  readonly stored: StoreFeature;
  readonly reports: ReportService;
  readonly liveView: LiveView;
  readonly campaignStore: CampaignStore;
  /** The do_not_call tool, offered beside the business's. */
  readonly doNotCall: ToolBox;
  /** The replicas' webhook calls' owners, when replicas share PostgreSQL with a CLUSTER_SECRET. */
  readonly owners: WebhookOwners | undefined;
  /** Tools offered before the files' and MCP servers' (a scenario's stubs): a name here wins. */
  readonly extraTools: ToolBox | undefined;
  /** Also told of every call that ended (an eval waits for its call's record). */
  readonly callObservers: readonly CallObserver[];
  /** The business's documents, looked up at each turn and offered as search_knowledge; none without. */
  readonly knowledge: Knowledge | undefined;
  /** How long a greeting waits for the call's start to be on record (StartOptions). */
  readonly startedRecordWaitMs: number | undefined;
}

export async function openCalls(config: Config, logger: Logger, parts: CallsParts, opened: OpenedStack) {
  const { files, model, telemetry, tools, stored, reports, owners } = parts;
  const { store, replica } = stored;
  const { metrics } = telemetry;
  const callRows = new CallRepository(store.db, { owner: replica.id, dialect: store.dialect });
  const records = new CallWriter({
    rows: callRows,
    journal: new WriteJournal(storeJournalDir(config.transcriptsDir, replica.id), logger),
    logger,
    // A final record, once stored, gets its report.
    stored: (summary) => reports.callStored(summary),
    failed: () => metrics.storeWriteFailed(),
  });
  metrics.watchStore(() => records.backlog);
  // Before any call: what a killed process journalled is written, and the calls it left in progress are cut off.
  await records.replay();
  await cutOffCallsInProgress(callRows, records, logger);

  // The numbers in a call: requests in memory and in the store (for whichever replica the call reaches).
  const { outbound } = config;
  const outboundRequestRows = new OutboundRequestRepository(store.db, { replica: replica.id, instance: replica.instance }, store.dialect, replica.deadAfterMs);
  const pendingCalls = new OutboundRequests(new PendingCalls(outbound.ttlMs), outboundRequestRows, outbound.ttlMs, logger, outbound.defaultCountryCode);
  const observers = new CallObservers((error) => logger.error({ err: error }, 'a call observer failed'));
  observers.add(
    {
      callProgress: (call) => records.callProgress(call),
      // The report follows once the row is stored; reports.whenIdle() waits for both.
      callEnded: (summary) => reports.awaitStored(records.callEnded(summary)),
    },
    // Before the campaigns (added once they open): the number a call had is being freed when they look at it again.
    {
      callStarted: (info) => pendingCalls.callStarted(info),
      callProgress: (call) => pendingCalls.callProgress(call),
      callEnded: (summary) => pendingCalls.callEnded(summary),
    },
    ...(owners ? [{ callEnded: (summary: CallSummary) => owners.release(summary.sessionId) }] : []),
    ...parts.callObservers,
  );
  const registry = new CallRegistry({
    llm: model.llm,
    prompts: () => files.prompts.current,
    pendingCalls,
    transcripts: files.transcripts,
    transfer: config.llm.mode === 'demo' && !config.transfer.defaultTarget ? { ...config.transfer, defaultTarget: 'demo-operator' } : config.transfer,
    toolBox: combineToolBoxes([tools.files, tools.mcp], logger, {
      builtins: [parts.doNotCall, ...(parts.knowledge ? [parts.knowledge.tool] : []), ...(tools.sms ? [tools.sms] : [])],
      ...(parts.extraTools ? { stubs: parts.extraTools } : {}),
    }),
    knowledge: parts.knowledge?.base,
    // Costs nothing until the prompts have a second language: a call in one language never asks it.
    languageDetector: { minConfidence: DEFAULT_MIN_CONFIDENCE, detect: detectLanguage },
    callerContext: () => tools.files.callerContext,
    businessConnections,
    voicemail: parts.voicemail,
    observer: observers,
    startedRecordWaitMs: parts.startedRecordWaitMs,
    activity: parts.liveView.activity,
    // Among replicas a call may go on elsewhere from its record: each reply is on it once played.
    recordEachReply: owners !== undefined,
    redaction: { redact: files.redact, fromModel: config.privacy.redactFromModel, callerLines: callerRedactionOf(config.privacy.redaction) },
    prices: files.prices,
    earlierLife: async (sessionId) => {
      // Handed over by a stopping replica: its record as it was let go. Else the store's (its replica killed, or an earlier start).
      const handed = await owners?.takeHandover(sessionId);
      if (handed) return priorCallOf(handed, false);
      const latest = await callRows.latestOfSession(sessionId);
      return latest && priorCallOf(latest.record, latest.ended);
    },
    settings: {
      llmTimeoutMs: config.llm.timeoutMs,
      llmThinkingTimeoutMs: config.llm.thinkingTimeoutMs,
      llmTotalTimeoutMs: config.llm.totalTimeoutMs,
      llmMaxFailures: config.llm.maxFailures,
      llmMaxToolRounds: config.llm.maxToolRounds,
      llmMaxTokens: config.llm.maxTokens,
      replyMaxChars: config.replyMaxChars,
      thinkingFillerMs: config.thinkingFillerMs,
      playbackGraceMs: config.playbackGraceMs,
      historyMaxChars: config.llm.historyMaxChars,
      timeZone: config.timeZone,
      perCallLanguages: config.languages.perCall,
      configureTranscription: config.languages.configureTranscription,
      toolHoldMs: config.tools.holdMs,
      toolHoldRepeatMs: config.tools.holdRepeatMs,
      smsMaxPerCall: config.tools.smsMaxPerCall,
    },
    tracing: telemetry.tracing.calls,
    maxCalls: config.limits.maxCalls,
    idleTimeoutMs: config.limits.idleTimeoutMs,
    logger,
    metrics,
  });
  metrics.countCalls(() => registry.size);
  const webhookCalls = new WebhookCalls(
    registry,
    { pacing: config.webhookReply, holdMs: config.webhookHoldMs, arrays: config.actionArrays.has('webhook') },
    logger,
  );
  // Stopping, this replica hands its webhook calls to the others between turns (a rolling deploy).
  const handover =
    owners &&
    new WebhookHandover(
      owners,
      registry,
      webhookCalls,
      async (call, to) => {
        await Promise.all([callRows.passTo(call.callId, to), parts.campaignStore.passAttempt(call.sessionId, to)]);
      },
      logger,
    );
  opened.push('the calls', {
    stopTaking: () => registry.stopAccepting(),
    close: async () => {
      // Every call has ended (the transports' close ended them): each is handed to the writer, and
      // what the database takes in time is written, the rest waits in the journal.
      await registry.whenRecorded();
      await records.close(RECORDS_CLOSE_MS);
      // Once the records are written: each call handed over names the replica that has it.
      await handover?.finish();
      // The numbers of the calls ended freed in the store, before it goes.
      await pendingCalls.settled();
    },
  });
  // An operator's transfer or hangup reaches the call wherever it runs: here, or at the replica that holds it.
  const control = owners && config.replica.clusterSecret ? new ClusterControl(registry, store, replica, config.replica.clusterSecret, logger) : registry;
  return { registry, records, callRows, pendingCalls, outboundRequestRows, observers, webhookCalls, handover, control };
}

export type Calls = Awaited<ReturnType<typeof openCalls>>;
