/**
 * The web dashboard: the live calls, the history and each call's story, the campaigns, the prompt
 * files, People and Audit, for staff logged in (or let in by an authenticating proxy).
 */
import type { Router } from 'express';
import { CampaignNotFoundError } from '../campaigns/errors.js';
import { createCampaign } from '../campaigns/create-campaign.js';
import type { Config } from '../config.js';
import { dashboardRouter } from '../dashboard/dashboard-router.js';
import { proxyIdentity } from '../dashboard/proxy-identity.js';
import { StoreReads } from '../dashboard/reads.js';
import type { Logger } from '../logger.js';
import { OutboundNotConfiguredError } from '../outbound/errors.js';
import { StoreSessions } from '../store/session-repository.js';
import { StaffRepository } from '../store/staff-repository.js';
import type { SecretGate } from '../transport/auth.js';
import type { CallFiles } from './call-files.js';
import type { Calls } from './calls.js';
import type { Dialling } from './campaigns.js';
import type { LiveView } from './live-view.js';
import type { OpenedStack } from './opened.js';
import type { Privacy } from './privacy.js';
import type { StoreFeature } from './store.js';
import type { Tools } from './tools.js';
import type { ReportService } from '../reports/report-service.js';
import type { CsvExports } from '../transport/csv-export.js';

export interface DashboardParts {
  readonly files: CallFiles;
  readonly tools: Tools;
  readonly stored: StoreFeature;
  readonly calls: Calls;
  readonly dialling: Dialling;
  readonly liveView: LiveView;
  readonly reports: ReportService;
  readonly privacy: Privacy;
  readonly gate: SecretGate;
  readonly exports: CsvExports;
}

export function openDashboard(config: Config, logger: Logger, parts: DashboardParts, opened: OpenedStack): Router {
  const { files, stored, calls, liveView, reports, gate } = parts;
  const { campaigns, outboundCalls } = parts.dialling;
  // The store's queries off the event loop through the store; the prompts folder and transcripts parsed on a thread.
  const reads = new StoreReads(stored.store, { dir: config.promptsDir, env: parts.tools.env }, logger);
  opened.push('the dashboard', { stopTaking: () => reads.close() });
  const { defaultCountryCode } = config.outbound;
  return dashboardRouter({
    adminToken: config.adminToken,
    redact: files.redact,
    audit: parts.privacy.audit,
    staff: new StaffRepository(stored.store.db),
    // Replicas behind one balancer: a login must hold on each of them, and a logout end it on all.
    ...(config.databaseUrl && { sessionStore: new StoreSessions(stored.store.db) }),
    accountRecheckMs: config.dashboardRecheckMs,
    ...(config.proxyAuth && { proxyIdentity: proxyIdentity(config.proxyAuth, gate.proxyTrust) }),
    people: parts.privacy.person,
    live: liveView.live,
    reads,
    // A call in progress writes to the file placed for it: the session id may have had calls before.
    transcriptFileOf: (sessionId) => calls.registry.get(sessionId)?.transcriptFile ?? files.transcripts.fileOf(sessionId),
    // Another replica's call: its transcript is on that one's disk, its conversation so far in its record.
    ...(liveView.relay && {
      remoteConversation: async (sessionId: string) => {
        if (calls.registry.get(sessionId)) return undefined;
        const latest = await calls.callRows.latestOfSession(sessionId);
        if (!latest || latest.ended) return undefined;
        return (latest.record.conversation ?? []).map((line) => ({ role: line.role, text: line.text }));
      },
    }),
    control: calls.control,
    callEnded: (sessionId) => calls.registry.hasEnded(sessionId),
    prompts: () => files.prompts.current,
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
    createCampaign: (input) => createCampaign(campaigns, input, { defaultCountryCode }),
    outboundMissing: () => outboundCalls.missing(),
    promptsStatus: () => files.prompts.status,
    gate,
    exports: parts.exports,
    logger,
  });
}
