/**
 * The schema's steps from here on, written once for both dialects: each is appended to SQLite's
 * list (sqlite/migrations.ts) and PostgreSQL's (postgres/migrations.ts), so a new field of a call —
 * a column both know as written, INTEGER, TEXT — is one line here, not one per dialect. A step whose
 * SQL differs gives each its own. As in the lists themselves, a step once released is never edited.
 *
 * Adding a field to a call: its zod field in call/ports/call-record-schema.ts (the store's columns,
 * the journal, the handover and the report derive from it), a step here, and the line of the call
 * that fills it (call/call-record.ts).
 */
export interface StepForBoth {
  readonly sqlite: string;
  readonly postgres: string;
}

/** A step whose SQL both dialects take as written. */
export const both = (sql: string): StepForBoth => ({ sqlite: sql, postgres: sql });

export const STEPS_FOR_BOTH: readonly StepForBoth[] = [
  // SQLite's step 13 and PostgreSQL's 7 onwards, e.g.:
  // both('ALTER TABLE calls ADD COLUMN unanswered_transfers INTEGER;'),
];
