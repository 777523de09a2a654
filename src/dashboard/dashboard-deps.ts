import type { CallControl } from '../call/ports/call-control.js';
import type { CreatedCampaign } from '../campaigns/create-campaign.js';
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../logger.js';
import type { AuditLog } from '../privacy/audit-log.js';
import type { PersonDataDeps } from '../privacy/person-data.js';
import type { Who } from '../staff/roles.js';
import type { Redact } from '../call/ports/redaction.js';
import type { PromptSet, PromptsStatus } from '../prompts/prompt-store.js';
import type { SecretGate } from '../transport/auth.js';
import type { CsvExports } from '../transport/csv-export.js';
import type { LiveCalls } from './live-calls.js';
import type { DashboardReads } from './reads.js';
import type { SessionStore } from '../staff/sessions.js';

/** A value, or its promise: the store's writers answer synchronously or, on the asynchronous store, later (issue 22). */
type MaybePromise<T> = T | Promise<T>;

/** What the dashboard reads; `server.ts` hands in the store's and the call core's parts. */
/** What pausing or resuming a campaign came to. */
import type { TranscriptLine } from './transcript-lines.js';

export type CampaignAction = 'done' | 'not_found' | { notDone: string };

/** The staff accounts the dashboard checks a login against (src/store/staff-repository.ts). */
export interface StaffAccounts {
  /** The account, if the password is its own. */
  check(name: string, password: string): Promise<Who | undefined>;
  /** The account as it is now: gone, or with its role. */
  get(name: string): Promise<Who | undefined>;
}

export interface DashboardDeps {
  /** Without it the dashboard is off: every page says how to turn it on. */
  adminToken: string | undefined;
  live: LiveCalls;
  /** The store's calls, reports and campaigns, and the files the dashboard parses, read off the event loop (see StoreReads). */
  reads: DashboardReads;
  /** Where a call's transcript is being written: a call in progress is shown from it. */
  transcriptFileOf(sessionId: string): string;
  /**
   * The conversation so far of a call in progress at another replica (its transcript is on that
   * one's disk), from its record in the store; undefined for a call held here.
   */
  remoteConversation?(sessionId: string): Promise<TranscriptLine[] | undefined>;
  /** Hands a call in progress over, or ends it, for the person watching. */
  control: CallControl;
  /** Whether the call ended in this process (its story may not be stored yet). */
  callEnded(sessionId: string): boolean;
  /** The prompts in use, for the lines an operator's handover or hangup makes the caller hear. */
  prompts(): PromptSet;
  /** TZ of the built-in date and time placeholders. */
  timeZone: string | undefined;
  /** Sends reports whose delivery was given up again (all, or one call's); undefined without a report webhook. */
  redeliver(which?: { callId: string }): MaybePromise<number | undefined>;
  /**
   * Pauses or resumes a campaign: no new calls while paused, calls in progress go on. 'not_found' for no such
   * campaign; why not, for one that cannot be resumed (outbound calling not configured).
   */
  campaign(id: string, action: 'pause' | 'resume'): Promise<CampaignAction> | CampaignAction;
  /** Creates a campaign as POST /api/campaigns does: the same checks, the same errors. */
  createCampaign(input: unknown): Promise<CreatedCampaign>;
  /** The AIFLOW_* variables not set, which campaigns need: the campaigns page says so before anyone types. */
  outboundMissing(): string[];
  /** The prompts folder's version in use and its last check. */
  promptsStatus(): PromptsStatus;
  /** The failure budget a wrong admin token spends, shared with every other edge. */
  gate: SecretGate;
  /** Staff accounts: without them, only the admin token logs in. */
  staff?: StaffAccounts | undefined;
  /** Who an authenticating reverse proxy says is there (PROXY_AUTH_*, from TRUST_PROXY's addresses only). */
  proxyIdentity?: ((req: IncomingMessage) => Who | undefined) | undefined;
  /** The words as they may be shown (personal data redacted); the live view applies it as it sends. */
  redact?: Redact | undefined;
  /** Where logins are kept: in the store where replicas share it, else this process's memory. */
  sessionStore?: SessionStore | undefined;
  /** How often (ms) a session's staff account is asked again, by pages and by every open live view or export (DASHBOARD_RECHECK_SECONDS). */
  accountRecheckMs?: number | undefined;
  /** Where staff actions are recorded, and read back on the audit page. */
  audit?: AuditLog | undefined;
  /** A person's data, for access and erasure requests (the People page). */
  people?: PersonDataDeps | undefined;
  /** The process's CSV exports, shared with the campaigns' results (one limit for both); its own without. */
  exports?: CsvExports | undefined;
  logger: Logger;
}
