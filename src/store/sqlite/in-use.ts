/**
 * A second Hotline server on a SQLite file one already uses (file-owner.ts): the error that
 * crosses from the SQLite thread, and what it tells the person starting it.
 */

export const IN_USE_CODE = 'HOTLINE_FILE_IN_USE';

/** Who holds a database file. */
export interface FileOwner {
  readonly pid: number;
  readonly host: string;
  readonly since: string;
}

/** The owner travels as JSON in the message: a thread's error carries a code and a message only. */
export function inUseError(owner: FileOwner | undefined): Error {
  return Object.assign(new Error(JSON.stringify(owner ?? null)), { code: IN_USE_CODE });
}

function ownerOf(message: string): FileOwner | undefined {
  try {
    const parsed: unknown = JSON.parse(message);
    return parsed && typeof parsed === 'object' && 'pid' in parsed ? (parsed as FileOwner) : undefined;
  } catch {
    return undefined;
  }
}

/** Which process has the file, and what to change. Said at once: waiting would not make the first one go. */
export function inUseMessage(file: string, errorMessage: string): string {
  const owner = ownerOf(errorMessage);
  const who = owner ? `Hotline process ${owner.pid} on ${owner.host} (since ${owner.since})` : 'another Hotline, starting this moment';
  return (
    `DATABASE_FILE ${file} is in use by ${who}: a SQLite file is one Hotline's. Stop that one first, or give this one ` +
    'a file of its own: set DATABASE_FILE to another file, or TRANSCRIPTS_DIR to another folder (the database is ' +
    'hotline.db in it unless DATABASE_FILE says otherwise). Several Hotline processes share one store only on PostgreSQL: set DATABASE_URL.'
  );
}
