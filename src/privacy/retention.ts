/**
 * Retention: personal data kept no longer than the operator's limits (GDPR art. 5(1)(e)).
 *
 * - retention-settings.ts: the limits, from RETENTION_DAYS and RETENTION_<KIND>_DAYS.
 * - retention-sweep.ts: one sweep of the store and the transcripts folder.
 * - retention-files.ts: the transcript files' part of it.
 * - retention-sweeper.ts: the sweep on a timer, off the calls' path.
 */
export {
  checkRetentionSettings,
  hasRetentionLimit,
  MAX_RETENTION_DAYS,
  RETENTION_DEFAULT_VARIABLE,
  RETENTION_KINDS,
  RETENTION_VARIABLES,
  retentionSettingsFromEnv,
  type RetentionKind,
  type RetentionSettings,
} from './retention-settings.js';
export {
  CALL_RECORD_MIN_MS,
  FLOORED_KINDS,
  noRetentionCounts,
  RETENTION_BATCH,
  retentionCutoffs,
  RetentionSweepError,
  sweepRetention,
  type RetentionCounts,
  type RetentionDeps,
} from './retention-sweep.js';
export { sweepTranscriptFiles, type TranscriptSweep, type TranscriptSweepResult } from './retention-files.js';
export {
  DEFAULT_RETENTION_FIRST_DELAY_MS,
  DEFAULT_RETENTION_INTERVAL_MS,
  startRetentionSweeper,
  type RetentionSweeper,
  type RetentionSweeperOptions,
} from './retention-sweeper.js';
