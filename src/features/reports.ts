/**
 * Each call's report: its summary and the fields report.md asks for, stored and delivered, signed,
 * to the business's webhook.
 */
import type { Redact } from '../call/ports/redaction.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { ReportService } from '../reports/report-service.js';
import type { Model } from './model.js';
import type { OpenedStack } from './opened.js';
import type { StoreFeature } from './store.js';
import type { Telemetry } from './telemetry.js';

export function openReports(config: Config, logger: Logger, parts: { stored: StoreFeature; model: Model; telemetry: Telemetry; redact: Redact }, opened: OpenedStack): ReportService {
  const { model } = parts;
  const reports = new ReportService({
    store: parts.stored.store,
    replica: parts.stored.replica.id,
    promptsDir: config.promptsDir,
    llm: config.reports.fields ? { apiKey: model.apiKey, baseURL: model.baseURL, model: config.reports.model ?? config.llm.model } : undefined,
    ...(config.reports.webhookUrl && config.reports.webhookSecret && { webhook: { url: config.reports.webhookUrl, secret: config.reports.webhookSecret } }),
    retry: { giveUpAfterMs: config.reports.giveUpAfterMs },
    logger,
    tracing: parts.telemetry.tracing.deliveries,
    redact: parts.redact,
  });
  // Closed once every call has ended and its record is written: the reports in progress may finish.
  opened.push('the reports', { close: () => reports.close() });
  return reports;
}
