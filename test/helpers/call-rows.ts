import type { Insertable } from 'kysely';
import type { CallsTable } from '../../src/store/schema.js';

/**
 * An ended call's row as a test writes it into the store directly: what the test does not name is
 * a short inbound call with nothing said, and no transcript file.
 */
export function endedCallRow(row: Pick<Insertable<CallsTable>, 'call_id' | 'from_number' | 'to_number' | 'started_at'> & Partial<Insertable<CallsTable>>): Insertable<CallsTable> {
  return {
    session_id: row.call_id,
    direction: 'inbound',
    ended_at: row.started_at,
    duration_ms: 1000,
    end_reason: 'caller_hung_up',
    service_reason: null,
    turns: '[]',
    barge_ins: 0,
    tool_runs: '[]',
    variables: null,
    tags: null,
    transcript_file: '/nonexistent',
    ...row,
  };
}
