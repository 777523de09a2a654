/**
 * Runs once before the whole run: says loudly when the PostgreSQL half of the store tests will be
 * skipped, and how to run it.
 */
import { postgresReachable, POSTGRES_SERVER } from '../helpers/stores.js';
import { oncePerRun } from './once-per-run.js';

export default function postgresNotice(): Promise<void> {
  return oncePerRun('postgres-notice', notice);
}

async function notice(): Promise<void> {
  if (await postgresReachable()) return;
  const line = '!'.repeat(100);
  console.warn(
    `\n${line}\n` +
      `!! No PostgreSQL answers at ${POSTGRES_SERVER.replace(':postgres@', ':***@')}: every test that runs on both stores runs on SQLite only.\n` +
      '!! To run them on PostgreSQL too, start a server there with trust auth (or the password "postgres"),\n' +
      '!! e.g. `apt-get install postgresql && pg_ctlcluster 15 main start` — .ci/run does this by itself.\n' +
      `${line}\n`,
  );
}
