import path from 'node:path';

/** Where the call writer journals records not yet in the database: beside the transcripts, the record's other half. */
export function storeJournalDir(transcriptsDir: string): string {
  return path.join(transcriptsDir, 'store-journal');
}
