/**
 * startHotline: the features composed in the order each needs the others, everything each opens
 * kept on one stack, closed in reverse by a shutdown and by a start that fails halfway alike.
 * Used by main.ts, the tests and the tools. Each feature's wiring is in src/features/.
 */
import { startLanguageDetection } from './features/languages.js';
import type { CallRegistry } from './call/call-registry.js';
import type { ToolBox } from './call/ports/business-tools.js';
import type { CallObserver } from './call/ports/call-summary.js';
import type { CampaignRunner } from './campaigns/campaign-runner.js';
import { systemClock, type Clock } from './campaigns/clock.js';
import type { ReplicaRegistry } from './cluster/replica-registry.js';
import type { Config } from './config.js';
import { openAccess } from './features/access.js';
import { openCallFiles } from './features/call-files.js';
import { openCalls } from './features/calls.js';
import { openDialling, openStopList } from './features/campaigns.js';
import { openWebhookOwners } from './features/cluster.js';
import { openDashboard } from './features/dashboard.js';
import { sweepWhatDeadReplicasLeft } from './features/left-behind.js';
import { openListeners } from './features/listeners.js';
import { openLiveView } from './features/live-view.js';
import { openModel } from './features/model.js';
import { OpenedStack } from './features/opened.js';
import { openPrivacy } from './features/privacy.js';
import { openReports } from './features/reports.js';
import { gracefulShutdown } from './features/shutdown.js';
import { openStoreFeature } from './features/store.js';
import { openTelemetry } from './features/telemetry.js';
import { openTools } from './features/tools.js';
import { openKnowledge, type Knowledge } from './features/knowledge.js';
import { openVoicemail } from './features/voicemail.js';
import { webhookRoutes } from './features/webhook.js';
import { redactUrlCredentials, type Logger } from './logger.js';
import type { PromptStore } from './prompts/prompt-store.js';
import { startProgress, type StartProgress } from './startup/progress.js';
import type { ReportService } from './reports/report-service.js';
import type { CallWriter } from './store/call-writer.js';
import type { Store } from './store/store.js';
import type { Metrics } from './telemetry/metrics.js';
import type { McpHub } from './tools/mcp-hub.js';
import type { ToolStore } from './tools/tool-store.js';
import { adminApiRouter } from './transport/admin-api.js';
import { campaignsRouter } from './transport/campaigns-api.js';
import { CsvExports } from './transport/csv-export.js';
import { internalApiRouter } from './transport/internal-api.js';

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
  /** The business's documents, indexed and watched (KNOWLEDGE_DIR); undefined with KNOWLEDGE=false. */
  readonly knowledge: Knowledge | undefined;
  /** Graceful shutdown (features/shutdown.ts): no new call, calls may finish for up to `graceMs`, then everything closes. */
  shutdown(graceMs: number): Promise<void>;
  /** Stops at once: ends every call, flushes transcripts, closes everything the start opened. */
  close(): Promise<void>;
}

export interface StartOptions {
  watchPrompts?: boolean;
  /** Where tool files' `${NAME}` references are looked up; default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Tools offered before the files' and MCP servers' (a scenario's stubs): a name here wins. */
  extraTools?: ToolBox;
  /** Also told of every call that ended (an eval waits for its call's record). */
  callObservers?: readonly CallObserver[];
  /** The campaigns' clock (calling hours, retries, answer timeouts); default the system's. */
  campaignClock?: Clock;
  /** How long a greeting waits for the call's start to be on record; default 250 ms (call/started-record.ts). A test holding the row's lock sets it longer. */
  startedRecordWaitMs?: number;
  /** A worker of WORKERS: the other replicas reach it on a loopback port of its own (not INTERNAL_URL's). */
  worker?: boolean;
  /** Told what each part of the start waits for; default: a log line when a part takes over a second (startup/progress.ts). */
  progress?: StartProgress;
}

export async function startHotline(config: Config, logger: Logger, options: StartOptions = {}): Promise<RunningHotline> {
  const opened = new OpenedStack(logger);
  try {
    return await compose(config, logger, options, opened);
  } catch (error) {
    await opened.closeAll();
    throw error;
  }
}

async function compose(config: Config, logger: Logger, options: StartOptions, opened: OpenedStack): Promise<RunningHotline> {
  const watch = options.watchPrompts ?? true;
  // Each wait of the start, named as a person starting Hotline would look for it.
  const { step } = options.progress ?? startProgress(logger);
  const files = await step(`reading the prompts in ${config.promptsDir}`, () => openCallFiles(config, logger, watch, opened));
  // Loads on a thread of its own while the rest starts; awaited before the port opens.
  const detection = startLanguageDetection(config, logger, files.prompts);
  const model = await step(
    config.llm.mode === 'demo' ? 'starting the demo model' : `setting up the LLM at ${redactUrlCredentials(config.llm.baseURL ?? 'OpenAI')}`,
    () => openModel(config, logger, opened),
  );
  const telemetry = await step('starting the telemetry (metrics, traces)', () => openTelemetry(config, logger, files.redact, model.baseURL, opened));
  const tools = await step(`reading the tool files in ${config.promptsDir}`, () => openTools(config, logger, { watch, env: options.env ?? process.env }, opened));
  const voicemail = await step('reading the voicemail phrases', () => openVoicemail(config, logger, model, watch, opened));
  const store = config.databaseUrl ? `PostgreSQL at ${redactUrlCredentials(config.databaseUrl)}` : `SQLite ${config.databaseFile}`;
  const stored = await step(`opening the store and bringing its schema up to date (${store})`, () => openStoreFeature(config, logger, opened));
  const knowledge = config.knowledge
    ? await step(`indexing the documents in ${config.knowledge.dir}`, () => openKnowledge(config, logger, stored, { watch }, opened))
    : undefined;
  const reports = openReports(config, logger, { stored, model, telemetry, redact: files.redact }, opened);
  const gate = openAccess(config, logger, opened);
  const privacy = openPrivacy(config, logger, stored, gate, opened);
  const liveView = await step('opening the live view of the calls', () => openLiveView(config, logger, stored, files.redact, opened));
  const owners = openWebhookOwners(config, logger, stored);
  const clock = options.campaignClock ?? systemClock;
  const stopList = openStopList(config, logger, stored, clock);
  const calls = await step('settling the calls the last run left (its journal, the calls it left in progress)', () =>
    openCalls(
      config,
      logger,
      { files, model, telemetry, tools, voicemail, stored, reports, liveView, owners, knowledge, ...stopList, extraTools: options.extraTools, callObservers: options.callObservers ?? [], startedRecordWaitMs: options.startedRecordWaitMs },
      opened,
    ),
  );
  const dialling = openDialling(config, logger, { calls, stopList, clock }, opened);
  const webhook = webhookRoutes(config, logger, { calls, owners, stored, telemetry, gate });
  // One limit for every CSV export, the dashboard's and the campaigns'.
  const exports = new CsvExports(logger);
  const { defaultCountryCode } = config.outbound;
  const routers = [
    ...(webhook.public ? [webhook.public] : []),
    adminApiRouter({
      token: config.adminToken,
      gate,
      outbound: dialling.outboundCalls,
      control: calls.control,
      liveCalls: () => liveView.live.list().map((call) => ({ ...call, replica: liveView.replicaOf(call.sessionId) })),
      redeliver: (sessionId) => reports.redeliver(sessionId),
      defaults: { countryCode: defaultCountryCode },
      logger,
    }),
    privacy.router,
    campaignsRouter({ token: config.adminToken, gate, runner: dialling.campaigns, repository: stopList.campaignStore, defaultCountryCode, exports }),
    openDashboard(config, logger, { files, tools, stored, calls, dialling, liveView, reports, privacy, gate, exports }, opened),
  ];
  // What replicas ask of each other, carried out by this replica's own calls (never passed on again).
  const { clusterSecret } = config.replica;
  const internalRouters =
    owners && clusterSecret ? [...(webhook.internal ? [webhook.internal] : []), internalApiRouter({ secret: clusterSecret, gate, control: calls.registry })] : [];
  const { metrics } = telemetry;
  await step("loading the language detector (the callers' first words choose their language)", () => detection);
  const listening = await step(`opening port ${config.port} on ${config.host}`, () =>
    openListeners(
      config,
      logger,
      { registry: calls.registry, metrics, gate, stored, routers, internalRouters, storeBacklog: () => calls.records.backlog, worker: options.worker ?? false },
      opened,
    ),
  );
  // Listening first: a campaign's calls ring back into this server. What this replica's earlier start
  // requested stays in the store: a call still ringing then is greeted as asked.
  await step('resuming the campaigns', () => dialling.campaigns.start());
  sweepWhatDeadReplicasLeft(logger, { stored, calls, dialling }, opened);

  const close = (): Promise<void> => opened.closeAll();
  return {
    url: listening.url,
    wsUrl: listening.wsUrl,
    port: listening.port,
    internalUrl: listening.internal?.url,
    registry: calls.registry,
    prompts: files.prompts,
    reports,
    tools: { files: tools.files, mcp: tools.mcp },
    llmEndpoint: model.llm.baseURL,
    metrics,
    store: stored.store,
    records: calls.records,
    replica: stored.replica,
    campaigns: dialling.campaigns,
    knowledge,
    shutdown: gracefulShutdown(config, logger, { registry: calls.registry, stored, handover: calls.handover, listening, dialling, close }),
    close,
  };
}
