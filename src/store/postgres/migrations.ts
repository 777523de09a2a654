/**
 * The PostgreSQL schema, one step per version, recorded in `hotline_schema`.
 * Step 1 is the SQLite schema as it stands at its step 7 (see ../sqlite/migrations.ts): the
 * same tables, columns and meanings, so one set of queries serves both. A step, once released,
 * is never edited; add a new one — and the matching step on SQLite.
 *
 * Differences that are PostgreSQL's own: epoch milliseconds are BIGINT (they overflow INTEGER);
 * `stop_list` and `campaign_contacts` carry a `rowid` column because the queries shared with
 * SQLite order and slice by SQLite's implicit rowid; the tally triggers are PL/pgSQL.
 */
import { STEPS_FOR_BOTH } from '../migrations-both.js';

export const POSTGRES_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE calls (
    call_id         TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    direction       TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    from_number     TEXT,
    to_number       TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    duration_ms     BIGINT,
    end_reason      TEXT,
    service_reason  TEXT,
    turns           TEXT NOT NULL,
    barge_ins       INTEGER NOT NULL,
    tool_runs       TEXT NOT NULL,
    variables       TEXT,
    tags            TEXT,
    transcript_file TEXT NOT NULL,
    revision        BIGINT NOT NULL DEFAULT 0
  );
  CREATE INDEX calls_by_end ON calls (ended_at);
  CREATE INDEX calls_by_session ON calls (session_id);
  CREATE INDEX calls_in_progress ON calls (started_at) WHERE ended_at IS NULL;

  CREATE TABLE reports (
    call_id       TEXT PRIMARY KEY REFERENCES calls (call_id) ON DELETE CASCADE,
    session_id    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    summary       TEXT,
    fields        TEXT,
    fields_status TEXT NOT NULL CHECK (fields_status IN ('ok', 'failed', 'skipped')),
    fields_error  TEXT,
    body          TEXT NOT NULL
  );

  CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    call_id         TEXT,
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    last_error      TEXT,
    delivered_at    TEXT,
    retry_from      TEXT
  );
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_by_session ON deliveries (session_id);
  CREATE INDEX deliveries_by_call ON deliveries (call_id);
  CREATE INDEX deliveries_failed ON deliveries (session_id) WHERE status = 'failed';

  CREATE TABLE campaigns (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    settings        TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('running', 'paused', 'done')),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    last_started_at BIGINT,
    complete        INTEGER NOT NULL DEFAULT 1,
    merged          INTEGER NOT NULL DEFAULT 0,
    zones           TEXT,
    stop_mark       BIGINT NOT NULL DEFAULT -1
  );

  CREATE TABLE campaign_contacts (
    rowid           BIGINT GENERATED ALWAYS AS IDENTITY,
    campaign_id     TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    idx             INTEGER NOT NULL,
    number          TEXT NOT NULL,
    variables       TEXT NOT NULL,
    time_zone       TEXT,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'calling', 'reached', 'done')),
    outcome         TEXT CHECK (outcome IN ('completed', 'voicemail', 'no_answer', 'busy', 'failed', 'refused')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL DEFAULT 0,
    last_session_id TEXT,
    last_error      TEXT,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (campaign_id, idx)
  );
  CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, next_attempt_at, idx) WHERE status = 'pending';
  CREATE INDEX campaign_contacts_status ON campaign_contacts (campaign_id, status);
  CREATE INDEX campaign_contacts_number ON campaign_contacts (campaign_id, number);

  CREATE TABLE stop_list (
    rowid    BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    number   TEXT PRIMARY KEY,
    reason   TEXT NOT NULL,
    added_at TEXT NOT NULL
  );

  CREATE TABLE campaign_tally (
    campaign_id TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    status      TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    called      INTEGER NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, status, outcome, called)
  );

  CREATE FUNCTION campaign_tally_count() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
      UPDATE campaign_tally SET n = n - 1
        WHERE campaign_id = OLD.campaign_id AND status = OLD.status AND outcome = COALESCE(OLD.outcome, '')
          AND called = (OLD.attempts > 0)::int;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
      INSERT INTO campaign_tally (campaign_id, status, outcome, called, n)
        VALUES (NEW.campaign_id, NEW.status, COALESCE(NEW.outcome, ''), (NEW.attempts > 0)::int, 1)
        ON CONFLICT (campaign_id, status, outcome, called) DO UPDATE SET n = campaign_tally.n + 1;
    END IF;
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER campaign_tally_insert AFTER INSERT ON campaign_contacts
    FOR EACH ROW EXECUTE FUNCTION campaign_tally_count();
  CREATE TRIGGER campaign_tally_update AFTER UPDATE OF status, outcome, attempts ON campaign_contacts
    FOR EACH ROW EXECUTE FUNCTION campaign_tally_count();
  CREATE TRIGGER campaign_tally_delete AFTER DELETE ON campaign_contacts
    FOR EACH ROW EXECUTE FUNCTION campaign_tally_count();
  `,
  // 2: several Hotlines on one store (issue 23): as SQLite's step 8, and `auth_failures`, the wrong
  // secrets per address counted across replicas (rate-limiter-flexible's table; one process on SQLite needs none).
  `
  CREATE TABLE replicas (
    id            TEXT PRIMARY KEY,
    instance      TEXT NOT NULL,
    host          TEXT NOT NULL,
    pid           INTEGER NOT NULL,
    internal_url  TEXT,
    started_at    TEXT NOT NULL,
    heartbeat_at  BIGINT NOT NULL,
    stopping      INTEGER NOT NULL DEFAULT 0
  );
  ALTER TABLE calls ADD COLUMN owner TEXT;
  CREATE INDEX calls_in_progress_by_owner ON calls (owner) WHERE ended_at IS NULL;
  ALTER TABLE campaign_contacts ADD COLUMN replica TEXT;
  ALTER TABLE deliveries ADD COLUMN claimed_by TEXT;
  CREATE TABLE auth_failures (
    key     VARCHAR(255) PRIMARY KEY,
    points  INTEGER NOT NULL DEFAULT 0,
    expire  BIGINT
  );
  CREATE TABLE webhook_sessions (
    session_id    TEXT PRIMARY KEY,
    replica       TEXT NOT NULL,
    started_at    TEXT NOT NULL
  );
  CREATE TABLE outbound_requests (
    to_number     TEXT PRIMARY KEY,
    variables     TEXT NOT NULL,
    tags          TEXT,
    requested_at  BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    replica       TEXT NOT NULL
  );
  `,
  // 3: the conversation as heard in a call's record, and a handed-over call's record in its webhook row (SQLite's step 9).
  `
  ALTER TABLE calls ADD COLUMN conversation TEXT;
  ALTER TABLE webhook_sessions ADD COLUMN handover TEXT;
  `,
  // 4: erasures, staff accounts, their sessions and the audit log (SQLite's step 10).
  `
  CREATE TABLE erasures (
    id          TEXT PRIMARY KEY,
    erased_at   TEXT NOT NULL,
    actor       TEXT NOT NULL,
    counts      TEXT NOT NULL
  );
  CREATE TABLE staff (
    name           TEXT PRIMARY KEY,
    role           TEXT NOT NULL,
    password_hash  TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
  );
  CREATE TABLE audit_log (
    id          TEXT PRIMARY KEY,
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,
    role        TEXT NOT NULL,
    action      TEXT NOT NULL,
    source      TEXT,
    call_id     TEXT,
    session_id  TEXT,
    detail      TEXT
  );
  CREATE INDEX audit_log_by_time ON audit_log (at);
  CREATE INDEX audit_log_by_session ON audit_log (session_id) WHERE session_id IS NOT NULL;
  CREATE TABLE dashboard_sessions (
    id_hash     TEXT PRIMARY KEY,
    expires_at  BIGINT NOT NULL,
    name        TEXT NOT NULL,
    role        TEXT NOT NULL
  );
  CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_at);
  CREATE INDEX reports_by_created ON reports (created_at);
  CREATE INDEX deliveries_by_created ON deliveries (created_at);
  `,
  // 5: what a call's LLM turns cost, filled for the calls stored before from their turns (SQLite's step 11).
  `
  ALTER TABLE calls ADD COLUMN cost_usd DOUBLE PRECISION;
  UPDATE calls SET cost_usd = (
      SELECT CASE
          WHEN COUNT(*) = 0 THEN 0
          WHEN bool_or(t.value -> 'tokens' IS NOT NULL AND t.value -> 'costUsd' IS NULL) THEN NULL
          ELSE SUM((t.value ->> 'costUsd')::float8)
        END
      FROM json_array_elements(turns::json) t(value));
  `,
  // 6: a number's row stays while its call is on the line, and names the start of the replica holding it (SQLite's step 12).
  `
  ALTER TABLE outbound_requests ADD COLUMN session_id TEXT;
  ALTER TABLE outbound_requests ADD COLUMN instance TEXT;
  `,
  // From here on, the steps written once for both dialects.
  ...STEPS_FOR_BOTH.map((step) => step.postgres),
];
