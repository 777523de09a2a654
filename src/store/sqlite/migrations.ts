/**
 * The database's schema, one step per version. `PRAGMA user_version` says how
 * many steps a file has had; opening it runs the rest, each in a transaction
 * of its own. A step, once released, is never edited: a file that already had
 * it would never see the change. Add a new step instead.
 *
 * Times people read are ISO text; `deliveries.next_attempt_at` is epoch
 * milliseconds because it is only ever compared with the clock;
 * so is `campaign_contacts.next_attempt_at`.
 */
import { STEPS_FOR_BOTH } from '../migrations-both.js';

export const SQLITE_MIGRATIONS: readonly string[] = [
  // 1: calls, their reports, and the webhook queue (issue 15).
  `
  CREATE TABLE calls (
    session_id      TEXT PRIMARY KEY,
    direction       TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    from_number     TEXT,
    to_number       TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT NOT NULL,
    duration_ms     INTEGER NOT NULL,
    end_reason      TEXT NOT NULL,
    service_reason  TEXT,
    turns           TEXT NOT NULL,
    barge_ins       INTEGER NOT NULL,
    tool_runs       TEXT NOT NULL,
    variables       TEXT,
    tags            TEXT,
    transcript_file TEXT NOT NULL
  ) STRICT;
  CREATE INDEX calls_by_end ON calls (ended_at);

  CREATE TABLE reports (
    session_id    TEXT PRIMARY KEY REFERENCES calls (session_id) ON DELETE CASCADE,
    created_at    TEXT NOT NULL,
    summary       TEXT,
    fields        TEXT,
    fields_status TEXT NOT NULL CHECK (fields_status IN ('ok', 'failed', 'skipped')),
    fields_error  TEXT,
    body          TEXT NOT NULL
  ) STRICT;

  CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    url             TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    last_error      TEXT,
    delivered_at    TEXT
  ) STRICT;
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_by_session ON deliveries (session_id);
  `,
  // 2: campaigns, their contacts, and the stop list (issue 15).
  `
  CREATE TABLE campaigns (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    settings   TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('running', 'paused', 'done')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE campaign_contacts (
    campaign_id     TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    idx             INTEGER NOT NULL,
    number          TEXT NOT NULL,
    variables       TEXT NOT NULL,
    time_zone       TEXT,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'calling', 'reached', 'done')),
    outcome         TEXT CHECK (outcome IN ('completed', 'voicemail', 'no_answer', 'busy', 'failed', 'refused')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    last_session_id TEXT,
    last_error      TEXT,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (campaign_id, idx)
  ) STRICT;
  CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, next_attempt_at) WHERE status = 'pending';

  CREATE TABLE stop_list (
    number   TEXT PRIMARY KEY,
    reason   TEXT NOT NULL,
    added_at TEXT NOT NULL
  ) STRICT;
  `,
  // 3: a campaign's last call start, so its pace holds across a restart; indexes that let the
  // scheduler ask for the next contact and for counts without reading every contact.
  `
  ALTER TABLE campaigns ADD COLUMN last_started_at INTEGER;
  DROP INDEX campaign_contacts_due;
  CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, next_attempt_at, idx) WHERE status = 'pending';
  CREATE INDEX campaign_contacts_status ON campaign_contacts (campaign_id, status);
  `,
  // 4: a delivery given up can be sent again; its time limit then counts from the new start.
  `
  ALTER TABLE deliveries ADD COLUMN retry_from TEXT;
  CREATE INDEX deliveries_failed ON deliveries (session_id) WHERE status = 'failed';
  `,
  // 5: a campaign's contacts are written in slices, never in one long write on the calls' event loop:
  // a campaign is one only once `complete` (a process that died half-way leaves one that is not). How
  // many rows were merged as duplicates, and the contacts' time zones, written at creation. Up to which
  // stop-list row its waiting contacts have been checked (-1: made before numbers on stop lists were
  // normalised, so its own list is checked again, normalised). Contacts found by number, for that check.
  // The contacts counted by status, outcome and whether called, kept by triggers: a campaign's progress
  // is a few rows to read, not 150,000 to count on the event loop the calls share.
  `
  ALTER TABLE campaigns ADD COLUMN complete INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE campaigns ADD COLUMN merged INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE campaigns ADD COLUMN zones TEXT;
  ALTER TABLE campaigns ADD COLUMN stop_mark INTEGER NOT NULL DEFAULT -1;
  CREATE INDEX campaign_contacts_number ON campaign_contacts (campaign_id, number);

  CREATE TABLE campaign_tally (
    campaign_id TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    status      TEXT NOT NULL,
    outcome     TEXT NOT NULL,  -- '' while there is none
    called      INTEGER NOT NULL,  -- attempts > 0
    n           INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, status, outcome, called)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO campaign_tally (campaign_id, status, outcome, called, n)
    SELECT campaign_id, status, COALESCE(outcome, ''), attempts > 0, COUNT(*) FROM campaign_contacts GROUP BY 1, 2, 3, 4;
  CREATE TRIGGER campaign_tally_insert AFTER INSERT ON campaign_contacts BEGIN
    INSERT INTO campaign_tally (campaign_id, status, outcome, called, n)
      VALUES (NEW.campaign_id, NEW.status, COALESCE(NEW.outcome, ''), NEW.attempts > 0, 1)
      ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER campaign_tally_update AFTER UPDATE OF status, outcome, attempts ON campaign_contacts BEGIN
    UPDATE campaign_tally SET n = n - 1
      WHERE campaign_id = OLD.campaign_id AND status = OLD.status AND outcome = COALESCE(OLD.outcome, '') AND called = (OLD.attempts > 0);
    INSERT INTO campaign_tally (campaign_id, status, outcome, called, n)
      VALUES (NEW.campaign_id, NEW.status, COALESCE(NEW.outcome, ''), NEW.attempts > 0, 1)
      ON CONFLICT DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER campaign_tally_delete AFTER DELETE ON campaign_contacts BEGIN
    UPDATE campaign_tally SET n = n - 1
      WHERE campaign_id = OLD.campaign_id AND status = OLD.status AND outcome = COALESCE(OLD.outcome, '') AND called = (OLD.attempts > 0);
  END;
  `,
  // 6: a call has an id of its own (issue 21): the voice service may use a session id again, and
  // the later call is stored beside the earlier one instead of over it. Calls stored before keep
  // their session id as their call id, so links to them stay valid.
  `
  CREATE TABLE calls_by_call (
    call_id         TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    direction       TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    from_number     TEXT,
    to_number       TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT NOT NULL,
    duration_ms     INTEGER NOT NULL,
    end_reason      TEXT NOT NULL,
    service_reason  TEXT,
    turns           TEXT NOT NULL,
    barge_ins       INTEGER NOT NULL,
    tool_runs       TEXT NOT NULL,
    variables       TEXT,
    tags            TEXT,
    transcript_file TEXT NOT NULL
  ) STRICT;
  INSERT INTO calls_by_call SELECT session_id, session_id, direction, from_number, to_number, started_at, ended_at,
    duration_ms, end_reason, service_reason, turns, barge_ins, tool_runs, variables, tags, transcript_file FROM calls;

  CREATE TABLE reports_by_call (
    call_id       TEXT PRIMARY KEY REFERENCES calls_by_call (call_id) ON DELETE CASCADE,
    session_id    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    summary       TEXT,
    fields        TEXT,
    fields_status TEXT NOT NULL CHECK (fields_status IN ('ok', 'failed', 'skipped')),
    fields_error  TEXT,
    body          TEXT NOT NULL
  ) STRICT;
  INSERT INTO reports_by_call SELECT session_id, session_id, created_at, summary, fields, fields_status, fields_error, body FROM reports;

  DROP TABLE reports;
  DROP TABLE calls;
  ALTER TABLE calls_by_call RENAME TO calls;
  ALTER TABLE reports_by_call RENAME TO reports;
  CREATE INDEX calls_by_end ON calls (ended_at);
  CREATE INDEX calls_by_session ON calls (session_id);

  ALTER TABLE deliveries ADD COLUMN call_id TEXT;
  UPDATE deliveries SET call_id = session_id;
  CREATE INDEX deliveries_by_call ON deliveries (call_id);
  `,
  // 7: a call is written as it happens (issue 22): its row exists from session_start, so its end,
  // duration and end reason are unknown until it ends. `revision` orders the snapshots of one call:
  // a later write never loses to an earlier one arriving late (a retried write, a replayed journal).
  `
  CREATE TABLE calls_v7 (
    call_id         TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    direction       TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    from_number     TEXT,
    to_number       TEXT,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    duration_ms     INTEGER,
    end_reason      TEXT,
    service_reason  TEXT,
    turns           TEXT NOT NULL,
    barge_ins       INTEGER NOT NULL,
    tool_runs       TEXT NOT NULL,
    variables       TEXT,
    tags            TEXT,
    transcript_file TEXT NOT NULL,
    revision        INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  INSERT INTO calls_v7 SELECT call_id, session_id, direction, from_number, to_number, started_at, ended_at,
    duration_ms, end_reason, service_reason, turns, barge_ins, tool_runs, variables, tags, transcript_file, 0 FROM calls;

  CREATE TABLE reports_v7 (
    call_id       TEXT PRIMARY KEY REFERENCES calls_v7 (call_id) ON DELETE CASCADE,
    session_id    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    summary       TEXT,
    fields        TEXT,
    fields_status TEXT NOT NULL CHECK (fields_status IN ('ok', 'failed', 'skipped')),
    fields_error  TEXT,
    body          TEXT NOT NULL
  ) STRICT;
  INSERT INTO reports_v7 SELECT call_id, session_id, created_at, summary, fields, fields_status, fields_error, body FROM reports;

  DROP TABLE reports;
  DROP TABLE calls;
  ALTER TABLE calls_v7 RENAME TO calls;
  ALTER TABLE reports_v7 RENAME TO reports;
  CREATE INDEX calls_by_end ON calls (ended_at);
  CREATE INDEX calls_by_session ON calls (session_id);
  CREATE INDEX calls_in_progress ON calls (started_at) WHERE ended_at IS NULL;
  `,
  // 8: several Hotlines on one store (issue 23). Replicas register and beat; a call in progress, a
  // contact being called and a report being sent name the replica that holds them, so the others
  // settle only what a dead one left. `outbound_requests` keeps a requested call's variables for
  // whichever replica its session_start reaches: one per number (the primary key), never two.
  // `webhook_sessions` names the replica a webhook call belongs to, for the others to forward its events to.
  `
  CREATE TABLE replicas (
    id            TEXT PRIMARY KEY,
    instance      TEXT NOT NULL,
    host          TEXT NOT NULL,
    pid           INTEGER NOT NULL,
    internal_url  TEXT,
    started_at    TEXT NOT NULL,
    heartbeat_at  INTEGER NOT NULL,
    stopping      INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  ALTER TABLE calls ADD COLUMN owner TEXT;
  CREATE INDEX calls_in_progress_by_owner ON calls (owner) WHERE ended_at IS NULL;
  ALTER TABLE campaign_contacts ADD COLUMN replica TEXT;
  ALTER TABLE deliveries ADD COLUMN claimed_by TEXT;
  CREATE TABLE webhook_sessions (
    session_id    TEXT PRIMARY KEY,
    replica       TEXT NOT NULL,
    started_at    TEXT NOT NULL
  ) STRICT;
  CREATE TABLE outbound_requests (
    to_number     TEXT PRIMARY KEY,
    variables     TEXT NOT NULL,
    tags          TEXT,
    requested_at  INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    replica       TEXT NOT NULL
  ) STRICT;
  `,
  // 9: a call goes on at another replica (its owner killed, or handing it over as it stops) with what
  // the caller heard: the conversation as heard is part of the call's record, and a call handed over
  // carries its record in its webhook row, exact at the moment it was let go.
  `
  ALTER TABLE calls ADD COLUMN conversation TEXT;
  ALTER TABLE webhook_sessions ADD COLUMN handover TEXT;
  `,
  // 10: personal data under the business's control. An erasure leaves only the fact and its counts;
  // staff sign in with their own accounts (the password as a scrypt hash); every staff action is in an
  // append-only audit log, which names calls by id and people by nothing; their logins hold on every
  // replica (dashboard_sessions, by the hash of the id). The retention sweep finds
  // old reports and deliveries by their time.
  `
  CREATE TABLE erasures (
    id          TEXT PRIMARY KEY,
    erased_at   TEXT NOT NULL,
    actor       TEXT NOT NULL,
    counts      TEXT NOT NULL
  ) STRICT;
  CREATE TABLE staff (
    name           TEXT PRIMARY KEY,
    role           TEXT NOT NULL,
    password_hash  TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
  ) STRICT;
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
  ) STRICT;
  CREATE INDEX audit_log_by_time ON audit_log (at);
  CREATE INDEX audit_log_by_session ON audit_log (session_id) WHERE session_id IS NOT NULL;
  CREATE TABLE dashboard_sessions (
    id_hash     TEXT PRIMARY KEY,
    expires_at  INTEGER NOT NULL,
    name        TEXT NOT NULL,
    role        TEXT NOT NULL
  ) STRICT;
  CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_at);
  CREATE INDEX reports_by_created ON reports (created_at);
  CREATE INDEX deliveries_by_created ON deliveries (created_at);
  `,
  // 11: what a call's LLM turns cost (issue 26), a column so the history can filter and sum it across
  // every call that matches, not only the page shown. Null when it is not known (see callCostUsd in llm/prices.ts,
  // whose rule this fills the calls stored before with, from their turns' costUsd): a turn whose
  // tokens had no price, or turns and no counted token at all; a call without a turn cost nothing.
  // One pass over each call's turns: about 2.5 s per 50,000 calls of 8 turns on a busy 2-core machine.
  // No index: the history's filters already read every matching row to count them.
  `
  ALTER TABLE calls ADD COLUMN cost_usd REAL;
  UPDATE calls SET cost_usd = (
      SELECT CASE
          WHEN COUNT(*) = 0 THEN 0
          WHEN MAX(t.value -> '$.tokens' IS NOT NULL AND t.value -> '$.costUsd' IS NULL) THEN NULL
          ELSE SUM(t.value ->> '$.costUsd')
        END
      FROM json_each(calls.turns) t)
    WHERE json_valid(turns) AND json_type(turns) = 'array';
  `,
  // 12: one call per person at a time, across replicas (issue 35). A number's row in
  // `outbound_requests` stays while its call is on the line — `session_id` names the call once it is
  // answered, or once a person calls in — and goes when that call ends, so no replica dials a person
  // another one has on the line. `instance` is the start of the replica that holds the row: a row of
  // a start that is no longer running gives way, even when the replica runs again under its id.
  `
  ALTER TABLE outbound_requests ADD COLUMN session_id TEXT;
  ALTER TABLE outbound_requests ADD COLUMN instance TEXT;
  `,
  // From here on, the steps written once for both dialects.
  ...STEPS_FOR_BOTH.map((step) => step.sqlite),
];
