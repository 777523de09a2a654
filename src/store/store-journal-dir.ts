import path from 'node:path';

/** Where the call writers journal records not yet in the database: beside the transcripts, the record's other half. */
export function storeJournalRoot(transcriptsDir: string): string {
  return path.join(transcriptsDir, 'store-journal');
}

/**
 * One replica's journal: a folder of its own, so replicas sharing a disk never replay each
 * other's records (a replica replays its own at its next start).
 */
export function storeJournalDir(transcriptsDir: string, replicaId: string): string {
  return path.join(storeJournalRoot(transcriptsDir), replicaId);
}
