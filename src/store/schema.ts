import type { Generated, Kysely } from 'kysely';
import { snakeCase, type CallField, type CallProgress, type SnakeCase } from '../call/ports/call-record-schema.js';

/**
 * The store's tables as the queries see them, on SQLite and PostgreSQL alike (see
 * sqlite/migrations.ts and postgres/migrations.ts). JSON columns are text on both; times people
 * read are ISO text; times only compared with the clock are epoch milliseconds.
 * Rows read back are still checked by each repository's zod schema: this only types the queries.
 */
export interface StoreSchema {
  calls: CallsTable;
  reports: ReportsTable;
  deliveries: DeliveriesTable;
  campaigns: CampaignsTable;
  campaign_contacts: CampaignContactsTable;
  campaign_tally: CampaignTallyTable;
  stop_list: StopListTable;
  replicas: ReplicasTable;
  outbound_requests: OutboundRequestsTable;
  webhook_sessions: WebhookSessionsTable;
  erasures: ErasuresTable;
  staff: StaffTable;
  audit_log: AuditLogTable;
  dashboard_sessions: DashboardSessionsTable;
}

/**
 * Where a column's name is not its record field's name in snake_case: "from" and "to" are SQL's
 * own words.
 */
const CALL_COLUMN_EXCEPTIONS = { from: 'from_number', to: 'to_number' } as const;

/** The column of a field of a call's record (CallRecordSchema): its name in snake_case, but for the exceptions. */
export type CallColumnOf<F extends CallField> = F extends keyof typeof CALL_COLUMN_EXCEPTIONS ? (typeof CALL_COLUMN_EXCEPTIONS)[F] : SnakeCase<F>;
export type CallColumn = CallColumnOf<CallField>;

export function callColumnOf<F extends CallField>(field: F): CallColumnOf<F> {
  return (Object.hasOwn(CALL_COLUMN_EXCEPTIONS, field) ? CALL_COLUMN_EXCEPTIONS[field as keyof typeof CALL_COLUMN_EXCEPTIONS] : snakeCase(field)) as CallColumnOf<F>;
}

/** A record's value in its column: strings and numbers as they are, a boolean 0 or 1, anything else JSON text. */
type ColumnValue<T> = T extends string | number ? T : T extends boolean ? number : string;

/**
 * A call's record as its columns hold it, in progress or ended: a field that may be missing
 * (optional, or an end not there yet) is nullable.
 */
type CallRecordColumns = {
  -readonly [F in CallField as CallColumnOf<F>]-?: ColumnValue<Exclude<CallProgress[F], undefined>> | (undefined extends CallProgress[F] ? null : never);
};

/** The `calls` table: the record's columns, and the row's own. */
export type CallsTable = Flat<
  CallRecordColumns & {
    /** Orders a call's snapshots: a write carrying a lower revision than the row's changes nothing. */
    revision: Generated<number>;
    /** The replica holding the call while it is in progress; the others settle it only once that one is dead. */
    owner: Generated<string | null>;
    /** What the call's LLM turns cost in USD; null when not known (callCostUsd in llm/prices.ts). Derived from `turns` on each write. */
    cost_usd: number | null;
  }
>;

type Flat<T> = { [K in keyof T]: T[K] };

export interface ReportsTable {
  call_id: string;
  session_id: string;
  created_at: string;
  summary: string | null;
  fields: string | null;
  fields_status: 'ok' | 'failed' | 'skipped';
  fields_error: string | null;
  body: string;
}

export interface DeliveriesTable {
  id: string;
  session_id: string;
  call_id: string | null;
  url: string;
  body: string;
  created_at: string;
  attempts: Generated<number>;
  next_attempt_at: number;
  status: 'pending' | 'delivered' | 'failed';
  last_error: string | null;
  delivered_at: string | null;
  retry_from: string | null;
  /** The replica sending it now (a claim): another replica's start leaves it alone while that one lives. */
  claimed_by: Generated<string | null>;
}

export interface CampaignsTable {
  id: string;
  name: string;
  settings: string;
  state: 'running' | 'paused' | 'done';
  created_at: string;
  updated_at: string;
  last_started_at: number | null;
  complete: Generated<number>;
  merged: Generated<number>;
  zones: string | null;
  stop_mark: Generated<number>;
}

export interface CampaignContactsTable {
  campaign_id: string;
  idx: number;
  number: string;
  variables: string;
  time_zone: string | null;
  status: 'pending' | 'calling' | 'reached' | 'done';
  outcome: 'completed' | 'voicemail' | 'no_answer' | 'busy' | 'failed' | 'refused' | null;
  attempts: Generated<number>;
  next_attempt_at: Generated<number>;
  last_session_id: string | null;
  last_error: string | null;
  updated_at: string;
  /**
   * The replica holding the attempt in flight: the one that placed it while `calling`, the one that
   * has the call once `reached`. Only it, or a replica after its death, settles it.
   */
  replica: Generated<string | null>;
}

export interface CampaignTallyTable {
  campaign_id: string;
  status: string;
  outcome: string;
  called: number;
  n: number;
}

export interface StopListTable {
  number: string;
  reason: string;
  added_at: string;
}

export interface ReplicasTable {
  id: string;
  /** This start of the replica: a second process taking a live replica's id is refused. */
  instance: string;
  /** Where it runs: a restart of the same replica on the same machine takes its id over at once. */
  host: string;
  pid: number;
  internal_url: string | null;
  started_at: string;
  /** Epoch ms of its last heartbeat, by its own clock. */
  heartbeat_at: number;
  /** 1 once it was told to stop: it takes no new work. */
  stopping: Generated<number>;
}

/**
 * A number in a call: being rung for a request (its variables kept for whichever replica the call
 * reaches), or on the line at a replica. One row per number: no second call to it while it is there.
 */
export interface OutboundRequestsTable {
  to_number: string;
  variables: string;
  tags: string | null;
  /** Epoch ms by the requesting replica's clock: with the number, which request this is. */
  requested_at: number;
  /** Epoch ms by the database's clock: after it, the call is not coming (while rung; not read once on the line). */
  expires_at: number;
  /** The replica that requested the call, or that has it on the line once it began. */
  replica: string;
  /** The call on the line (answered, or a person calling in); null while the number is being rung. */
  session_id: Generated<string | null>;
  /** The start of `replica` holding the row (ReplicaRegistry.instance); null in rows from before it was kept. */
  instance: Generated<string | null>;
}

export interface WebhookSessionsTable {
  session_id: string;
  /** The replica that saw the call's session_start over the webhook: its events belong there. */
  replica: string;
  started_at: string;
  /** A call handed over by a stopping replica: its record (JSON) at the moment it was let go, for the replica taking it. */
  handover: Generated<string | null>;
}

/** A person's data erased: when, by whom, and how much of each kind (JSON counts); never whose. */
export interface ErasuresTable {
  id: string;
  erased_at: string;
  actor: string;
  counts: string;
}

/** A member of staff who signs in to the dashboard. */
export interface StaffTable {
  name: string;
  role: 'viewer' | 'operator' | 'admin';
  /** scrypt, with its parameters and salt (src/privacy/passwords.ts). */
  password_hash: string;
  created_at: string;
  updated_at: string;
}

/** A dashboard login in force, for every replica to see: the id's SHA-256, never the id a cookie carries. */
export interface DashboardSessionsTable {
  id_hash: string;
  /** Epoch ms. */
  expires_at: number;
  name: string;
  role: string;
}

/** One staff action, appended and never changed (only the retention sweep removes old ones). */
export interface AuditLogTable {
  id: string;
  at: string;
  actor: string;
  role: string;
  action: string;
  /** Where the request came from (the client's address). */
  source: string | null;
  call_id: string | null;
  session_id: string | null;
  /** JSON: what the action concerned beyond the call (counts, a campaign's id), never a number or words. */
  detail: string | null;
}

/** The store's query builder: the same queries run on either database. */
export type Db = Kysely<StoreSchema>;

export type Dialect = 'sqlite' | 'postgres';
