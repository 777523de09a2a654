/**
 * Where the record of calls lives and who shares it: the transcripts folder, the SQLite file or
 * PostgreSQL, the replicas and the worker processes. A group of config.ts's environment schema,
 * kept with the part of `Config` it fills and the checks that keep several processes on one store.
 */
import path from 'node:path';
import { availableParallelism, hostname } from 'node:os';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { portNumber, text, url } from './config-values.js';
import { variableDocs } from './config-sections.js';

const projectRoot = path.resolve(import.meta.dirname, '..');

export const StoreEnv = z.object({
  TRANSCRIPTS_DIR: text.default(path.join(projectRoot, 'data', 'transcripts')).register(variableDocs, {
    section: 'calls',
    doc: `Folder for call transcripts, one <session id>.jsonl per call (a short hash added where the id had characters
      a file name cannot hold). Must be writable, or Hotline does not start.`,
  }),
  DATABASE_FILE: text.min(1).optional().register(variableDocs, {
    section: 'calls',
    doc: `The embedded SQLite database (one file, created with its folder) of every call's summary and report, and the
      queue of report deliveries: it survives restarts. :memory: keeps nothing.`,
    example: './data/transcripts/hotline.db',
    unsetMeans: 'hotline.db in TRANSCRIPTS_DIR, beside the transcripts',
  }),
  DATABASE_URL: text
    .regex(/^postgres(ql)?:\/\/./, 'DATABASE_URL must be a PostgreSQL URL, e.g. postgres://hotline:secret@db.example.com:5432/hotline')
    .optional()
    .register(variableDocs, {
      section: 'calls',
      doc: `PostgreSQL instead of the SQLite file, for a business that runs several Hotline processes or wants its
        database server's backups and replication (docs/store-and-replicas.md). The database must exist;
        Hotline creates its tables (migrating under a lock: processes starting together migrate once). The password
        is never logged.`,
      example: 'postgres://hotline:secret@127.0.0.1:5432/hotline',
      unsetMeans: 'the SQLite file (DATABASE_FILE)',
    }),
  REPLICA_ID: text
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, 'REPLICA_ID must be 1–64 letters, digits, dots, dashes, colons or underscores, e.g. hotline-1')
    .optional()
    .register(variableDocs, {
      section: 'replicas',
      doc: `This process's name among the replicas sharing DATABASE_URL (1–64 letters, digits, dots, dashes, colons or
        underscores), stable across its restarts: what a replica left in flight when it died (its calls in progress,
        its campaign calls) is settled by the others within seconds, and by itself at its next start. Two running
        processes with one name: the second refuses to start.`,
      example: 'hotline-1',
      unsetMeans: "the host name (a container's or pod's own)",
    }),
  INTERNAL_URL: url('INTERNAL_URL', 'http://10.0.0.12:3001').register(variableDocs, {
    section: 'replicas',
    doc: `Where the other replicas reach this one (registered with its heartbeat): a listener of its own, apart from
      PORT, serving only what replicas ask of each other (the public port answers /internal/* with 404). Opened with
      CLUSTER_SECRET on PostgreSQL. In Kubernetes set it to the pod's IP.`,
    example: 'http://10.0.0.12:3001',
    unsetMeans: 'the address it listens on (HOST), or its host name when it listens on all, and INTERNAL_PORT',
  }),
  INTERNAL_PORT: portNumber('INTERNAL_PORT').optional().register(variableDocs, {
    section: 'replicas',
    doc: "The internal listener's port, 0–65535. Never PORT.",
    example: '3001',
    unsetMeans: 'the port INTERNAL_URL names, else any free one',
  }),
  CLUSTER_SECRET: text.optional().register(variableDocs, {
    section: 'replicas',
    doc: `The secret replicas present to each other (at least 16 characters, the same on every replica). With it, a
      webhook event of a call another replica owns is forwarded there and its answer relayed, so a load balancer
      needs no stickiness. Never logged.`,
    unsetMeans: 'no event is forwarded',
  }),
  WORKERS: text
    .regex(/^(auto|[1-9]\d?)$/, 'WORKERS must be auto (one process per core) or a number of processes, 1–99')
    .default('1')
    .register(variableDocs, {
      section: 'replicas',
      doc: `Processes on this machine behind one port (node:cluster), each a replica of its own named
        <REPLICA_ID>-<n>, reached by the others on a loopback port of its own: auto (one per core) or a number, 1–99.
        More than 1 needs DATABASE_URL. A worker that stops is started again.`,
    }),
});


export interface StoreConfig {
  transcriptsDir: string;
  /** The embedded database of calls, reports and their deliveries (unless `databaseUrl` is set). */
  databaseFile: string;
  /** A PostgreSQL database instead of the SQLite file: several Hotline processes can share it. */
  databaseUrl: string | undefined;
  replica: {
    /** This process's name among the replicas sharing the store, stable across its restarts (default: the host name). */
    id: string;
    /** Where the other replicas reach this one; default this host's name (or HOST) and `internalPort`. */
    internalUrl: string | undefined;
    /** The port of the listener that alone serves what replicas ask of each other (never the public one); 0 any free port. */
    internalPort: number;
    /** What replicas present to each other (a webhook event forwarded to its call's replica); unset, none is forwarded. */
    clusterSecret: string | undefined;
  };
  /** Processes on this machine behind one port (WORKERS), each a replica of its own. */
  workers: number;
}

/**
 * The internal listener's port: INTERNAL_PORT, else the port INTERNAL_URL names (where the others are
 * told to reach it), else any free one. Never the public port: the replicas' routes are not served there.
 */
function internalPortOf(explicit: number | undefined, internalUrl: string | undefined, publicPort: number): number {
  const named = internalUrl === undefined ? undefined : new URL(internalUrl);
  const port = explicit ?? (named ? Number(named.port || (named.protocol === 'https:' ? 443 : 80)) : 0);
  if (port !== 0 && port === publicPort) {
    throw new ConfigError(
      `${explicit === undefined ? `INTERNAL_URL (${internalUrl})` : 'INTERNAL_PORT'} names port ${port}, which is PORT: what replicas ask of each other ` +
        'is served on a port of its own, never the public one. Use another port, e.g. INTERNAL_URL=http://<this host>:3001.',
    );
  }
  return port;
}

/** The store's part of the configuration; `publicPort` is PORT, which the internal listener may not take. */
export function storeConfigOf(e: z.infer<typeof StoreEnv>, publicPort: number): StoreConfig {
  const workers = e.WORKERS === 'auto' ? availableParallelism() : Number(e.WORKERS);
  if (workers > 1 && !e.DATABASE_URL) {
    throw new ConfigError(
      `WORKERS=${e.WORKERS} runs ${workers} processes, and they must share one store: set DATABASE_URL (PostgreSQL). ` +
        'The SQLite file is one process\'s; without DATABASE_URL run one (WORKERS=1).',
    );
  }
  return {
    workers,
    transcriptsDir: path.resolve(e.TRANSCRIPTS_DIR),
    // Beside the transcripts by default: one folder holds the whole record of the calls.
    databaseFile:
      e.DATABASE_FILE === undefined
        ? path.join(path.resolve(e.TRANSCRIPTS_DIR), 'hotline.db')
        : e.DATABASE_FILE === ':memory:'
          ? e.DATABASE_FILE
          : path.resolve(e.DATABASE_FILE),
    databaseUrl: e.DATABASE_URL,
    // A container's or pod's host name is its own, and the same across a restart of the process in it.
    replica: {
      id: e.REPLICA_ID ?? hostname().slice(0, 64),
      internalUrl: e.INTERNAL_URL,
      internalPort: internalPortOf(e.INTERNAL_PORT, e.INTERNAL_URL, publicPort),
      clusterSecret: e.CLUSTER_SECRET,
    },
  };
}
