/**
 * Personal data under the business's control: the audit log of who saw and did what, a person's
 * data read and erased by number (the API and the dashboard's People page), and the retention
 * sweep that removes what is older than its time, off the call path.
 */
import type { Router } from 'express';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { AuditLog } from '../privacy/audit-log.js';
import type { PersonDataDeps } from '../privacy/person-data.js';
import { startRetentionSweeper } from '../privacy/retention.js';
import type { SecretGate } from '../transport/auth.js';
import { privacyApiRouter } from '../transport/privacy-api.js';
import type { OpenedStack } from './opened.js';
import type { StoreFeature } from './store.js';

export interface Privacy {
  readonly audit: AuditLog;
  /** Where a person's data is found, for the API and the dashboard. */
  readonly person: PersonDataDeps;
  readonly router: Router;
}

export function openPrivacy(config: Config, logger: Logger, stored: StoreFeature, gate: SecretGate, opened: OpenedStack): Privacy {
  const { store } = stored;
  const audit = new AuditLog(store.db, logger);
  const person: PersonDataDeps = { db: store.db, dialect: store.dialect, transcriptsDir: config.transcriptsDir, defaultCountryCode: config.outbound.defaultCountryCode };
  const retention = startRetentionSweeper({
    db: store.db,
    dialect: store.dialect,
    transcriptsDir: config.transcriptsDir,
    settings: config.privacy.retention,
    now: Date.now,
    log: logger.child({ component: 'retention' }),
  });
  opened.push('the retention sweep', { stopTaking: () => retention.stop() });
  return { audit, person, router: privacyApiRouter({ token: config.adminToken, gate, person, audit, logger }) };
}
