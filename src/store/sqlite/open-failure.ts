import { statSync } from 'node:fs';
import path from 'node:path';

/**
 * Why the database could not be opened, as one line that names DATABASE_FILE,
 * the file, the cause and what to do. SQLite's own words ("file is not a
 * database") say nothing of which file or which setting.
 */
export function openFailure(file: string, error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const cause = typeof message === 'string' && message !== '' ? message : String(error);
  const named = `DATABASE_FILE ${file}`;
  const elsewhere = 'or set DATABASE_FILE to another file';
  const kind = typeof code === 'string' ? code : '';
  if (kind === 'SQLITE_NOTADB' || kind.startsWith('SQLITE_CORRUPT')) {
    return `${named} is not a SQLite database or is damaged (${cause}): restore it from a backup, or move it away and start again with a new one, ${elsewhere}`;
  }
  if (kind.startsWith('SQLITE_BUSY') || kind.startsWith('SQLITE_LOCKED')) {
    return `${named} is locked by another program (${cause}): stop the other Hotline or sqlite3 shell using it, or give this Hotline a DATABASE_FILE of its own`;
  }
  if (kind.startsWith('SQLITE_READONLY') || kind === 'EROFS') {
    return `${named} cannot be written (${cause}): let Hotline's user write the file and its folder (SQLite adds ${path.basename(file)}-wal and -shm beside it) or mount it writable, ${elsewhere}`;
  }
  if (kind === 'SQLITE_FULL' || kind === 'ENOSPC') return `${named} cannot grow: the disk is full (${cause}): free space, ${elsewhere}`;
  if (kind === 'EACCES' || kind === 'EPERM' || kind === 'SQLITE_PERM' || kind === 'SQLITE_AUTH') {
    return `${named} may not be opened by Hotline's user (${cause}): let that user read and write the file and its folder, ${elsewhere}`;
  }
  if (kind === 'ENOTDIR' || kind === 'EEXIST') return `${named} lies below a file, not a folder (${cause}): set DATABASE_FILE to a file in a folder`;
  if (isFolder(file)) return `${named} is a folder, not a file: set DATABASE_FILE to a file in it, e.g. ${path.join(file, 'hotline.db')}`;
  if (kind.startsWith('SQLITE_IOERR')) return `${named} could not be read or written (${cause}): check the disk it is on, ${elsewhere}`;
  if (kind === 'SQLITE_CANTOPEN') {
    return `${named} cannot be opened (${cause}): check that its folder exists and Hotline's user may write to it, ${elsewhere}`;
  }
  return `${named} cannot be opened (${kind || 'error'}: ${cause}): ${elsewhere} in a folder Hotline's user may write to`;
}

function isFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
