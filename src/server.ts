import { createServer, type Server } from 'node:http';
import { CampaignRunner } from './campaigns/campaign-runner.js';
import { campaignsRouter } from './transport/campaigns-api.js';
import { systemClock, type Clock } from './campaigns/clock.js';
import { CallObservers } from './call/call-observers.js';
import { openCampaignStore } from './campaigns/definition.js';
import { serviceDialer } from './campaigns/dialer.js';
import { doNotCallToolBox } from './campaigns/do-not-call-tool.js';
import { CampaignNotFoundError } from './campaigns/errors.js';
import { createCampaign } from './campaigns/create-campaign.js';
import { dashboardRouter } from './dashboard/dashboard-router.js';
import { LiveCalls } from './dashboard/live-calls.js';
import { StoreReads } from './dashboard/reads.js';
import type { AddressInfo } from 'node:net';
import type { ToolBox } from './call/ports/business-tools.js';
import { CallRegistry } from './call/call-registry.js';
import type { Config } from './config.js';
import { startDemoShop, type DemoShop } from './demo/shop.js';
import { demoScript } from './demo/demo-script.js';
import { OpenAiLlm } from './llm/llm.js';
import { startScriptedLlmServer, type ScriptedLlmServer } from './llm/scripted-server.js';
import type { Logger } from './logger.js';
import { Metrics } from './telemetry/metrics.js';
import { logSecrets } from './startup/log-secrets.js';
import { AiFlowClient } from './outbound/aiflow-client.js';
import { OutboundNotConfiguredError } from './outbound/errors.js';
import { OutboundCalls } from './outbound/outbound-calls.js';
import { PendingCalls } from './outbound/pending-calls.js';
import { OutboundRequests } from './outbound/outbound-requests.js';
import { OutboundRequestRepository } from './store/outbound-request-repository.js';
import { PromptStore } from './prompts/prompt-store.js';
import { ReportService } from './reports/report-service.js';
import { openStore, type Store } from './store/store.js';
import { CallRepository } from './store/call-repository.js';
import { CallWriter } from './store/call-writer.js';
import { cutOffCallsInProgress, cutOffOrphanedCalls } from './store/cut-off-calls.js';
import { ReplicaRegistry } from './cluster/replica-registry.js';
import { watchDepartures } from './cluster/departures.js';
import { sweepLeftBehind } from './cluster/left-behind-sweep.js';
import { WebhookHandover } from './cluster/webhook-handover.js';
import { WebhookRouting } from './cluster/webhook-routing.js';
import { WebhookOwners } from './cluster/webhook-owners.js';
import { sharedFailureCount } from './cluster/shared-failures.js';
import { ClusterControl } from './cluster/cluster-control.js';
import { LiveRelay } from './cluster/live-relay.js';
import type { CallActivityObserver } from './call/ports/call-activity.js';
import { internalApiRouter } from './transport/internal-api.js';
import { postgresPool } from './store/postgres/postgres-dialect.js';
import type { CallObserver, CallSummary } from './call/ports/call-summary.js';
import { storeJournalDir } from './store/store-journal-dir.js';
import { WriteJournal } from './store/write-journal.js';
import { combineToolBoxes } from './tools/combined-toolbox.js';
import { businessConnections } from './tools/http-call.js';
import { McpHub } from './tools/mcp-hub.js';
import { ToolStore } from './tools/tool-store.js';
import { createVoicemailDetector } from './voicemail/detector.js';
import { VoicemailPhrasesStore } from './voicemail/phrases-store.js';
import { priorCallOf } from './call/ports/prior-call.js';
import { TranscriptStore } from './transcripts/transcript-store.js';
import { CsvExports } from './transport/csv-export.js';
import { createHttpApp, createInternalApp } from './transport/http-app.js';
import { openInternalListener } from './transport/internal-listener.js';
import { keepAliveLongerThanBalancers } from './transport/keep-alive.js';
import { adminApiRouter } from './transport/admin-api.js';
import { privacyApiRouter } from './transport/privacy-api.js';
import { AuditLog } from './privacy/audit-log.js';
import { StaffRepository } from './store/staff-repository.js';
import { StoreSessions } from './store/session-repository.js';
import { loadPriceTable } from './llm/prices.js';
import { proxyIdentity } from './dashboard/proxy-identity.js';
import { startRetentionSweeper } from './privacy/retention.js';
import { callerRedactionOf, redactorOf } from './privacy/redactor-of.js';
import { compileProxyTrust } from './transport/auth.js';
import { AccessLimits, FailureBudget, RateLimit } from './transport/rate-limit.js';
import { WebhookCalls } from './transport/webhook-calls.js';
import { internalWebhookRouter, webhookRouter } from './transport/webhook.js';
import { RequestsInFlight } from './transport/requests-in-flight.js';
import { attachWebSocketTransport } from './transport/ws-server.js';
import { startTracing } from './telemetry/start-tracing.js';

/** How long a stopping Hotline waits for the database to take the last records; the rest wait in the journal. */
const RECORDS_CLOSE_MS = 5_000;
/** A stop waits at most this long for the HTTP requests under way (a forwarded event waits for its answer at most 4.5 s). */
const IN_FLIGHT_WAIT_MS = 5_000;
/** Connections for counting wrong secrets across replicas: only failures use them. */
const FAILURE_POOL_MAX = 2;
/** A stop waits at most this long for the last spans to reach the collector. */
const TRACING_CLOSE_MS = 3_000;

export interface RunningHotline {
  /** http://host:port of the bound server. */
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  /** Where the other replicas reach this one: its internal listener (INTERNAL_URL), open only among replicas. */
  readonly internalUrl: string | undefined;
  readonly registry: CallRegistry;
  readonly prompts: PromptStore;
  /** Every ended call's summary and report, and their deliveries. */
  readonly reports: ReportService;
  /** The tool files (`<PROMPTS_DIR>/tools`) and the MCP servers they name. */
  readonly tools: { readonly files: ToolStore; readonly mcp: McpHub };
  readonly llmEndpoint: string;
  readonly metrics: Metrics;
  /** The record of calls, reports, deliveries and campaigns: SQLite or PostgreSQL. */
  readonly store: Store;
  /** Writes each call's record as it happens; says how far behind the database it is. */
  readonly records: CallWriter;
  /** This process among the replicas sharing the store. */
  readonly replica: ReplicaRegistry;
  /** The campaigns: created, paused and resumed here or through /api/campaigns. */
  readonly campaigns: CampaignRunner;
  /**
   * Graceful shutdown: new calls are refused (and /readyz says 503) at once,
   * nothing more is dialled (POST /api/calls says 503, campaigns place no
   * call but stay running), calls in progress may finish for up to `graceMs`. SHUTDOWN_NOTICE_MS before
   * that, the callers still on the line hear why and are transferred to
   * TRANSFER_TARGET, or hung up on, politely. Then every call is ended,
   * transcripts are flushed and the server closes.
   */
  shutdown(graceMs: number): Promise<void>;
  /** Stops at once: ends every call, flushes transcripts. */
  close(): Promise<void>;
}

/** Wires configuration into a listening server. Used by main.ts, the tests and the tools alike. */
export async function startHotline(
  config: Config,
  logger: Logger,
  options: {
    watchPrompts?: boolean;
    /** Where tool files' `${NAME}` references are looked up; default process.env. */
    env?: Readonly<Record<string, string | undefined>>;
    /** Tools offered before the files' and MCP servers' (a scenario's stubs): a name here wins. */
    extraTools?: ToolBox;
    /** Also told of every call that ended (an eval waits for its call's record). */
    callObservers?: readonly CallObserver[];
    /** The campaigns' clock (calling hours, retries, answer timeouts); default the system's. */
    campaignClock?: Clock;
    /**
     * A worker of WORKERS, whose shared port reaches whichever worker the primary picks: the other
     * replicas reach it on a loopback port of its own (not INTERNAL_URL's).
     */
    worker?: boolean;
  } = {},
): Promise<RunningHotline> {
  const watch = options.watchPrompts ?? true;
  const prompts = await PromptStore.open(config.promptsDir, logger, { watch });
  // Card numbers, IBANs and the business's own patterns never reach a transcript, the store, the dashboard or a report.
  const redact = redactorOf(config.privacy.redaction);
  // Read before anything starts: a price file that cannot be used stops the start with what to fix.
  const prices = await loadPriceTable(config.llm.pricesFile);
  const transcripts = new TranscriptStore(config.transcriptsDir, redact);
  await transcripts.init();

  let demo: ScriptedLlmServer | undefined;
  let { apiKey, baseURL } = config.llm;
  if (config.llm.mode === 'demo') {
    // The demo model is served over loopback HTTP, so it runs through the same SDK path as a real LLM.
    demo = await startScriptedLlmServer({
      script: demoScript,
      host: '127.0.0.1',
      ttftMs: config.demo.ttftMs,
      tokenDelayMs: config.demo.tokenDelayMs,
      record: false,
    });
    apiKey = 'demo';
    baseURL = demo.baseURL;
  }
  // Traces of every call when an OTLP endpoint is configured; otherwise OpenTelemetry is never loaded.
  const tracing = await startTracing(config.tracing, { logger, redact, llmBaseUrl: baseURL });
  let toolEnv = options.env ?? process.env;
  let shop: DemoShop | undefined;
  if (config.llm.mode === 'demo' && !toolEnv.SHOP_API_URL) {
    // The shipped example tools call a shop; with the demo model, a small fake one answers them.
    shop = await startDemoShop();
    toolEnv = { ...toolEnv, SHOP_API_URL: shop.url };
  }
  const toolDefaults = { timeoutMs: config.tools.timeoutMs, maxChars: config.tools.resultMaxChars };
  // Taken out of every tool answer with the tools' own ${…} values: a business system may echo them.
  const toolSecrets = logSecrets(config);
  const toolFiles = await ToolStore.open(config.promptsDir, logger, { watch, env: toolEnv, defaults: toolDefaults, secrets: toolSecrets });
  const mcp = new McpHub(logger, { env: toolEnv, defaults: toolDefaults, secrets: toolSecrets });
  mcp.update(toolFiles.mcpServers);
  toolFiles.onChange(() => mcp.update(toolFiles.mcpServers));

  const voicemailPhrases = config.voicemail.enabled ? await VoicemailPhrasesStore.open(config.promptsDir, logger, { watch }) : undefined;
  const voicemail = voicemailPhrases && {
    detector: createVoicemailDetector({
      phrases: () => voicemailPhrases.current,
      // The demo model cannot judge: unsure words are taken for a person's.
      llm:
        config.llm.mode === 'demo'
          ? undefined
          : { apiKey, baseURL, model: config.voicemail.model ?? config.llm.model, timeoutMs: config.voicemail.judgeMs },
      logger,
    }),
    timing: { judgeMs: config.voicemail.judgeMs, quietMs: config.voicemail.quietMs },
  };

  // The record of every call: SQLite (DATABASE_FILE) on a thread of its own, or PostgreSQL (DATABASE_URL).
  const store = await openStore({ databaseFile: config.databaseFile, databaseUrl: config.databaseUrl }, logger, { claim: true });
  // One of the replicas sharing the store (one alone, on SQLite): named, beating, and settling what dead ones left.
  const replica = await ReplicaRegistry.join(store, config.replica, logger).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const reports = new ReportService({
    store,
    replica: replica.id,
    promptsDir: config.promptsDir,
    llm: config.reports.fields ? { apiKey, baseURL, model: config.reports.model ?? config.llm.model } : undefined,
    ...(config.reports.webhookUrl && config.reports.webhookSecret && { webhook: { url: config.reports.webhookUrl, secret: config.reports.webhookSecret } }),
    retry: { giveUpAfterMs: config.reports.giveUpAfterMs },
    logger,
    tracing: tracing.deliveries,
    redact,
  });

  const { outbound } = config;
  const client =
    outbound.apiUrl && outbound.accessToken
      ? new AiFlowClient({ baseUrl: outbound.apiUrl, accessToken: outbound.accessToken, timeoutMs: outbound.timeoutMs })
      : undefined;
  const campaignClock = options.campaignClock ?? systemClock;
  const campaignStore = openCampaignStore(store, replica.id);
  // Replicas on one PostgreSQL forward a webhook call's events to the replica that owns it.
  const { clusterSecret } = config.replica;
  const webhookOwners = clusterSecret && store.dialect === 'postgres' ? new WebhookOwners(store, replica, clusterSecret, logger) : undefined;
  if (store.dialect === 'postgres' && config.transports.has('webhook') && !webhookOwners) {
    logger.warn('webhook calls stay with one replica: with several replicas sharing DATABASE_URL, set CLUSTER_SECRET (and INTERNAL_URL) on each');
  }
  // The numbers in a call: requests in memory and in the store (for whichever replica the call reaches), and every person on the line, for all replicas to see.
  const outboundRequestRows = new OutboundRequestRepository(store.db, { replica: replica.id, instance: replica.instance }, store.dialect, replica.deadAfterMs);
  const pendingCalls = new OutboundRequests(new PendingCalls(outbound.ttlMs), outboundRequestRows, outbound.ttlMs, logger, outbound.defaultCountryCode);
  // The API's calls and the campaigns' alike: never while shutting down, never a number stopped or already in a call.
  const outboundCalls = new OutboundCalls({
    client,
    settings: outbound,
    pendingCalls,
    numbersOnTheLine: () => registry.numbersOnTheLine(),
    isStopped: (number) => campaignStore.isStopped(number),
  });
  const campaigns = new CampaignRunner({
    repository: campaignStore,
    dialer: serviceDialer(outboundCalls),
    clock: campaignClock,
    logger,
    defaultCountryCode: outbound.defaultCountryCode,
  });
  // A contact waiting for its number hears when a call here freed it in the store.
  pendingCalls.onFreed(() => campaigns.lineFreed());
  const doNotCall = doNotCallToolBox(
    (number, reason) =>
      campaignStore.addToStopList(number, reason, new Date(campaignClock.now())).catch((error: unknown) => {
        logger.error({ err: error }, 'a number could not be put on the stop list');
        throw error;
      }),
    { defaultCountryCode: outbound.defaultCountryCode },
  );

  const llm = new OpenAiLlm({
    apiKey,
    baseURL,
    model: config.llm.model,
    temperature: config.llm.temperature,
    maxTokensParam: config.llm.maxTokensParam,
    cacheMarks: config.llm.cacheMarks,
    streamUsage: config.llm.streamUsage,
    onStreamUsageRefused: () =>
      logger.warn('the LLM refused stream_options; token usage is recorded only where the server sends it unasked (LLM_STREAM_USAGE=false spares the first request after each start this refusal)'),
  });

  const transfer =
    config.llm.mode === 'demo' && !config.transfer.defaultTarget
      ? { ...config.transfer, defaultTarget: 'demo-operator' }
      : config.transfer;
  const live = new LiveCalls();
  // Replicas on one PostgreSQL show each other's live calls: this one's go out, theirs come in beside its own.
  // How many replicas share the request budgets (RateLimit): counted at each heartbeat, never per request.
  let aliveCount = 1;
  const replicasAlive = (): number => aliveCount;
  replica.onBeat(() => {
    replica.alive().then(
      (alive) => (aliveCount = Math.max(1, alive.length)),
      () => undefined,
    );
  });
  const liveRelay = config.databaseUrl ? new LiveRelay(config.databaseUrl, replica, live, logger, redact) : undefined;
  await liveRelay?.start();
  const activity: CallActivityObserver = liveRelay
    ? {
        changed: (call) => {
          live.changed(call);
          liveRelay.changed(call);
        },
        ended: (sessionId) => {
          live.ended(sessionId);
          liveRelay.ended(sessionId);
        },
      }
    : live;
  // The store's queries off the event loop through the store; the prompts folder and transcripts parsed on a thread.
  const dashboardReads = new StoreReads(store, { dir: config.promptsDir, env: toolEnv }, logger);
  // The gauge reads the registry at scrape time, after both exist.
  const metrics: Metrics = new Metrics();
  metrics.countCalls((): number => registry.size);
  // Each call's record, written as it happens; a final one, once stored, gets its report.
  const callRows = new CallRepository(store.db, { owner: replica.id, dialect: store.dialect });
  const records = new CallWriter({
    rows: callRows,
    journal: new WriteJournal(storeJournalDir(config.transcriptsDir, replica.id), logger),
    logger,
    stored: (summary) => reports.callStored(summary),
    failed: () => metrics.storeWriteFailed(),
  });
  metrics.watchStore(() => records.backlog);
  // Before any call: what a killed process journalled is written, and the calls it left in progress are cut off.
  await records.replay();
  await cutOffCallsInProgress(callRows, records, logger);
  const registry: CallRegistry = new CallRegistry({
    llm,
    prompts: () => prompts.current,
    pendingCalls,
    transcripts,
    transfer,
    toolBox: combineToolBoxes([toolFiles, mcp], logger, { builtins: [doNotCall], ...(options.extraTools ? { stubs: options.extraTools } : {}) }),
    callerContext: () => toolFiles.callerContext,
    businessConnections,
    voicemail,
    observer: ((observers: readonly CallObserver[], onError: (error: unknown) => void) => {
      const all = new CallObservers(onError);
      all.add(...observers);
      return all;
    })(
      [
        {
          callProgress: (call) => records.callProgress(call),
          // The report follows once the row is stored; reports.whenIdle() waits for both.
          callEnded: (summary) => reports.awaitStored(records.callEnded(summary)),
        },
        // Before the campaigns: the number a call had is being freed when they look at it again.
        {
          callStarted: (info) => pendingCalls.callStarted(info),
          callProgress: (call) => pendingCalls.callProgress(call),
          callEnded: (summary) => pendingCalls.callEnded(summary),
        },
        campaigns,
        ...(webhookOwners ? [{ callEnded: (summary: CallSummary) => webhookOwners.release(summary.sessionId) }] : []),
        ...(options.callObservers ?? []),
      ],
      (error) => logger.error({ err: error }, 'a call observer failed'),
    ),
    activity,
    // Among replicas a call may go on elsewhere from its record: each reply is on it once played.
    recordEachReply: webhookOwners !== undefined,
    redaction: { redact, fromModel: config.privacy.redactFromModel, callerLines: callerRedactionOf(config.privacy.redaction) },
    prices,
    earlierLife: async (sessionId) => {
      // Handed over by a stopping replica: its record as it was let go. Else the store's (its replica killed, or an earlier start).
      const handed = await webhookOwners?.takeHandover(sessionId);
      if (handed) return priorCallOf(handed, false);
      const stored = await callRows.latestOfSession(sessionId);
      return stored && priorCallOf(stored.record, stored.ended);
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
      toolHoldMs: config.tools.holdMs,
      toolHoldRepeatMs: config.tools.holdRepeatMs,
    },
    tracing: tracing.calls,
    maxCalls: config.limits.maxCalls,
    idleTimeoutMs: config.limits.idleTimeoutMs,
    logger,
    metrics,
  });

  // One reading of X-Forwarded-For for every edge, and one count of failed authentications per
  // address for every edge that compares a secret (transports, dashboard, admin API, metrics):
  // a guesser gains nothing by switching between them.
  const proxyTrust = compileProxyTrust(config.trustProxy);
  // Replicas on one PostgreSQL share the budget of wrong secrets: a guesser does not get it once per replica.
  const failurePool =
    config.databaseUrl && config.rateLimit.authFailuresPerMinute > 0 ? postgresPool(config.databaseUrl, logger, FAILURE_POOL_MAX) : undefined;
  const authFailures = new FailureBudget(
    config.rateLimit.authFailuresPerMinute,
    failurePool && sharedFailureCount(failurePool, config.rateLimit.authFailuresPerMinute, logger),
  );
  const gate = { failures: authFailures, proxyTrust };
  // An operator's transfer or hangup reaches the call wherever it runs: here, or at the replica that holds it.
  const operatorControl = webhookOwners && clusterSecret ? new ClusterControl(registry, store, replica, clusterSecret, logger) : registry;
  const webhookCalls = new WebhookCalls(
    registry,
    { pacing: config.webhookReply, holdMs: config.webhookHoldMs, arrays: config.actionArrays.has('webhook') },
    logger,
  );
  // Stopping, this replica hands its webhook calls to the others between turns (a rolling deploy).
  const passHandedOver = async (call: { callId: string; sessionId: string }, to: string): Promise<void> => {
    await Promise.all([callRows.passTo(call.callId, to), campaignStore.passAttempt(call.sessionId, to)]);
  };
  const handover = webhookOwners && new WebhookHandover(webhookOwners, registry, webhookCalls, passHandedOver, logger);
  // Which replica answers each webhook event, in front of this one's own answer.
  const webhookRouting = webhookOwners && handover && new WebhookRouting(webhookOwners, handover, registry, logger);
  // A transport that is switched off is not there at all: POST /webhook is a 404 like any unknown path.
  const webhookOptions = {
    registry,
    metrics,
    calls: webhookCalls,
    logger,
    secret: config.auth.webhookSecret,
    maxBytes: config.maxEventBytes,
    limits: new AccessLimits(new RateLimit(config.rateLimit.webhookPerMinute, replicasAlive), authFailures),
    proxyTrust,
    route: webhookRouting?.fromBalancer,
  };
  const webhook = config.transports.has('webhook') ? webhookRouter(webhookOptions) : undefined;
  // One limit for every CSV export, the dashboard's and the campaigns'.
  const csvExports = new CsvExports(logger);
  const admin = adminApiRouter({
    token: config.adminToken,
    gate,
    outbound: outboundCalls,
    control: operatorControl,
    liveCalls: () => live.list().map((call) => ({ ...call, replica: liveRelay?.replicaOf(call.sessionId) ?? replica.id })),
    redeliver: (sessionId) => reports.redeliver(sessionId),
    defaults: { countryCode: outbound.defaultCountryCode },
    logger,
  });
  const audit = new AuditLog(store.db, logger);
  const personData = { db: store.db, dialect: store.dialect, transcriptsDir: config.transcriptsDir, defaultCountryCode: outbound.defaultCountryCode };
  const privacy = privacyApiRouter({ token: config.adminToken, gate, person: personData, audit, logger });
  const app = createHttpApp({
    registry,
    metrics,
    logger,
    llm: { mode: config.llm.mode, model: config.llm.model },
    routers: [
      ...(webhook ? [webhook] : []),
      admin,
      privacy,
      campaignsRouter({
        token: config.adminToken,
        gate,
        runner: campaigns,
        repository: campaignStore,
        defaultCountryCode: outbound.defaultCountryCode,
        exports: csvExports,
      }),
      dashboardRouter({
        adminToken: config.adminToken,
        redact,
        audit,
        staff: new StaffRepository(store.db),
        // Replicas behind one balancer: a login must hold on each of them, and a logout end it on all.
        ...(config.databaseUrl && { sessionStore: new StoreSessions(store.db) }),
        accountRecheckMs: config.dashboardRecheckMs,
        ...(config.proxyAuth && { proxyIdentity: proxyIdentity(config.proxyAuth, proxyTrust) }),
        people: personData,
        live,
        reads: dashboardReads,
        // A call in progress writes to the file placed for it: the session id may have had calls before.
        transcriptFileOf: (sessionId) => registry.get(sessionId)?.transcriptFile ?? transcripts.fileOf(sessionId),
        // Another replica's call: its transcript is on that one's disk, its conversation so far in its record.
        ...(liveRelay && {
          remoteConversation: async (sessionId: string) => {
            if (registry.get(sessionId)) return undefined;
            const stored = await callRows.latestOfSession(sessionId);
            if (!stored || stored.ended) return undefined;
            return (stored.record.conversation ?? []).map((line) => ({ role: line.role, text: line.text }));
          },
        }),
        control: operatorControl,
        callEnded: (sessionId) => registry.hasEnded(sessionId),
        prompts: () => prompts.current,
        timeZone: config.timeZone,
        redeliver: (which) => reports.redeliver(which),
        campaign: async (id, action) => {
          try {
            if (action === 'pause') await campaigns.pause(id);
            else await campaigns.resume(id);
            return 'done';
          } catch (error) {
            if (error instanceof CampaignNotFoundError) return 'not_found';
            if (error instanceof OutboundNotConfiguredError) return { notDone: error.message };
            throw error;
          }
        },
        createCampaign: (input) => createCampaign(campaigns, input, { defaultCountryCode: outbound.defaultCountryCode }),
        outboundMissing: () => outboundCalls.missing(),
        promptsStatus: () => prompts.status,
        gate,
        exports: csvExports,
        logger,
      }),
    ],
    proxyTrust,
    metricsToken: config.auth.metricsToken,
    storeBacklog: () => records.backlog,
    gate,
  });
  const server = createServer(app);
  keepAliveLongerThanBalancers(server);
  /** No new connection on the public port (idle kept-alive ones close now); resolves once every one has closed. */
  let publicClosed: Promise<void> | undefined;
  const stopListening = (): Promise<void> => (publicClosed ??= new Promise<void>((resolve) => server.close(() => resolve())));
  const inFlight = new RequestsInFlight();
  inFlight.watch(server);
  // Without an upgrade listener Node hands an upgrade request to the app, which answers 404.
  const wss = config.transports.has('websocket')
    ? attachWebSocketTransport(server, {
        registry,
        logger,
        path: '/ws',
        maxPayload: config.maxEventBytes,
        token: config.auth.wsToken,
        limits: new AccessLimits(new RateLimit(config.rateLimit.wsUpgradesPerMinute, replicasAlive), authFailures),
        proxyTrust,
        startTimeoutMs: config.websocket.startTimeoutMs,
        pingIntervalMs: config.websocket.pingIntervalMs,
        reconnectGraceMs: config.websocket.reconnectGraceMs,
        actionArrays: config.actionArrays.has('websocket'),
      })
    : undefined;

  // What replicas ask of each other, carried out by this replica's own calls (never passed on again), on a
  // listener of their own: the public port answers /internal/* with 404.
  const internal =
    webhookOwners && clusterSecret
      ? await openInternalListener(
          createInternalApp({
            routers: [
              ...(webhookRouting && config.transports.has('webhook')
                ? [internalWebhookRouter({ ...webhookOptions, route: webhookRouting.fromReplica, clusterSecret, gate })]
                : []),
              internalApiRouter({ secret: clusterSecret, gate, control: registry }),
            ],
            logger,
            registry,
          }),
          // A worker of WORKERS: a loopback port of its own, not shared with the other workers through the primary.
          options.worker
            ? { host: '127.0.0.1', port: 0, exclusive: true, advertised: undefined }
            : { host: config.host, port: config.replica.internalPort, exclusive: false, advertised: config.replica.internalUrl },
        )
      : undefined;
  if (internal) {
    inFlight.watch(internal.server);
    await replica.setInternalUrl(internal.url);
  }
  await listen(server, config.port, config.host);
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `http://${host}:${port}`;
  // Listening first: a campaign's calls ring back into this server. Awaited, as the synchronous start was: what a
  // previous process left is settled before anyone else uses the store (a sync writer on this thread, while the old
  // Database remains, would wait on a transaction of the store's that needs this thread to finish).
  // What this replica's earlier start requested stays in the store: a call still ringing then is greeted as asked,
  // and the campaigns count it unanswered only once its answer timeout has passed.
  await campaigns.start();
  const leftBehind = sweepLeftBehind(
    replica,
    [
      (deadAfterMs) => cutOffOrphanedCalls(callRows, deadAfterMs, records, logger),
      (deadAfterMs) => campaigns.settleOrphaned(deadAfterMs),
      // A replica gone took its campaign timers with it (a retry it scheduled): the campaigns are looked at again.
      watchDepartures(replica, () => void campaigns.tick()),
      // A person's number stays no longer than their call: what no running replica holds any more goes.
      () => outboundRequestRows.sweep(),
    ],
    logger,
  );

  // Personal data older than its retention goes, off the call path (src/privacy/retention-sweeper.ts).
  const retention = startRetentionSweeper({
    db: store.db,
    dialect: store.dialect,
    transcriptsDir: config.transcriptsDir,
    settings: config.privacy.retention,
    now: Date.now,
    log: logger.child({ component: 'retention' }),
  });

  async function close(): Promise<void> {
    outboundCalls.stopDialling();
    await retention.stop();
    await leftBehind.stop();
    await replica.stopping().catch((error: unknown) => logger.warn({ err: error }, 'the other replicas could not be told this one stops'));
    campaigns.close();
    live.close();
    await dashboardReads.close();
    registry.stopAccepting();
    const closed = stopListening();
    await registry.endAll('shutdown');
    await liveRelay?.close();
    // Requests under way finish first (an event forwarded to the replica that has its call now):
    // cut, the service would see its event fail, and a balancer might send it again.
    await inFlight.settled(IN_FLIGHT_WAIT_MS);
    // The others forwarded this replica's calls' events here until its last call ended.
    internal?.server.close();
    internal?.server.closeAllConnections();
    // Closing the WebSocketServer stops its ping timer; its sockets do not close by themselves.
    wss?.close();
    for (const client of wss?.clients ?? []) client.terminate();
    server.closeAllConnections();
    await closed;
    prompts.close();
    // Every call has ended and its transcript is on disk: the reports in progress may finish.
    // Every ended call is handed to the writer: what the database takes in time is written, the rest waits in the journal.
    await registry.whenRecorded();
    await records.close(RECORDS_CLOSE_MS);
    await handover?.finish();
    await reports.close();
    // The campaigns' last writes (the calls ended above) before the store goes.
    await campaigns.settled();
    // The numbers of the calls ended above freed in the store, before it goes.
    await pendingCalls.settled();
    // close() may come twice (a shutdown, then a test's close): the pool ends once.
    if (failurePool && !failurePool.ended && !failurePool.ending) await failurePool.end();
    await replica.leave().catch((error: unknown) => logger.warn({ err: error }, 'this replica could not leave the store; the others will find it stopped beating'));
    await store.close();
    toolFiles.close();
    voicemailPhrases?.close();
    await mcp.close();
    // Every turn has ended: nothing streams any more, only idle keep-alive sockets are left.
    llm.close();
    await demo?.close();
    await shop?.close();
    // Last: every call, tool run and report delivery above has ended its spans.
    await tracing.close(TRACING_CLOSE_MS);
  }

  return {
    url,
    wsUrl: `ws://${host}:${port}/ws`,
    port,
    internalUrl: internal?.url,
    registry,
    prompts,
    reports,
    tools: { files: toolFiles, mcp },
    llmEndpoint: llm.baseURL,
    metrics,
    store,
    records,
    replica,
    campaigns,
    async shutdown(graceMs: number) {
      registry.stopAccepting();
      // The others see it stopping at once: no call is handed to it, and its webhook calls go to them.
      void replica.stopping().catch((error: unknown) => logger.warn({ err: error }, 'the other replicas could not be told this one stops'));
      handover?.begin();
      inFlight.stop();
      // Among replicas, the public port closes at once: a balancer's next connection here is refused and
      // it tries the next replica (nginx has no readiness checks; a refused connection is the one sign it
      // takes). The others forward this one's calls' events to its internal listener until each call is
      // handed over between turns. A lone Hotline keeps listening: its webhook calls' events come here.
      if (internal) void stopListening();
      // Nothing new is dialled: a person picking up now would reach a Hotline on its way out. Campaigns
      // stay running in the store and go on after the restart.
      outboundCalls.stopDialling();
      campaigns.stopDialling();
      const deadline = performance.now() + graceMs;
      // Calls may finish by themselves until the callers must be told, SHUTDOWN_NOTICE_MS before the end.
      await untilEmptyOr(registry, graceMs - config.limits.shutdownNoticeMs);
      if (registry.size > 0) {
        logger.info({ calls: registry.size }, 'shutting down: telling the callers still on the line');
        const told = registry.retireAll('shutdown');
        await Promise.race([told, untilEmptyOr(registry, deadline - performance.now())]);
      }
      await close();
    },
    close,
  };
}

/** Resolves once no call is in progress, or after `ms`. */
async function untilEmptyOr(registry: CallRegistry, ms: number): Promise<void> {
  if (ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  const over = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([registry.whenEmpty(), over]);
  clearTimeout(timer);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
