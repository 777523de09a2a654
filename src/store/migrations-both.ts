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

  // 13 / 7: the business's documents, split into passages, searched by each turn (issue 38). A
  // source is a file of the knowledge folder with the hash of what was indexed of it, so a start
  // or a replica indexes only what changed. SQLite searches the passages' stems (knowledge/terms.ts)
  // with FTS5's BM25, kept in step by triggers; PostgreSQL its own tsvector in the document's
  // language. How many passages hold each stem (SQLite's fts5vocab, PostgreSQL's knowledge_terms kept in
  // the same transactions) lets a search leave out the words too common to be worth their cost.
  // `embedding` is the passage's vector (float32, little-endian) when embeddings are on,
  // `neighbours` the ids of the passages nearest it, computed when the documents change.
  {
    sqlite: `
  CREATE TABLE knowledge_sources (
    path        TEXT PRIMARY KEY,
    hash        TEXT NOT NULL,
    language    TEXT NOT NULL,
    passages    INTEGER NOT NULL,
    indexed_at  TEXT NOT NULL,
    embedded    TEXT
  ) STRICT;
  CREATE TABLE knowledge_passages (
    id          INTEGER PRIMARY KEY,
    source      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    heading     TEXT NOT NULL,
    line        INTEGER NOT NULL,
    page        INTEGER,
    text        TEXT NOT NULL,
    language    TEXT NOT NULL,
    terms       TEXT NOT NULL,
    embedding   BLOB,
    neighbours  TEXT
  ) STRICT;
  CREATE INDEX knowledge_passages_by_source ON knowledge_passages (source, seq);
  CREATE VIRTUAL TABLE knowledge_fts USING fts5(terms, content='knowledge_passages', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
  CREATE TRIGGER knowledge_passages_added AFTER INSERT ON knowledge_passages BEGIN
    INSERT INTO knowledge_fts (rowid, terms) VALUES (new.id, new.terms);
  END;
  CREATE TRIGGER knowledge_passages_removed AFTER DELETE ON knowledge_passages BEGIN
    INSERT INTO knowledge_fts (knowledge_fts, rowid, terms) VALUES ('delete', old.id, old.terms);
  END;
  CREATE VIRTUAL TABLE knowledge_vocab USING fts5vocab(knowledge_fts, 'row');
  `,
    postgres: `
  CREATE TABLE knowledge_sources (
    path        TEXT PRIMARY KEY,
    hash        TEXT NOT NULL,
    language    TEXT NOT NULL,
    passages    INTEGER NOT NULL,
    indexed_at  TEXT NOT NULL,
    embedded    TEXT
  );
  CREATE TABLE knowledge_passages (
    id          BIGSERIAL PRIMARY KEY,
    source      TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    heading     TEXT NOT NULL,
    line        INTEGER NOT NULL,
    page        INTEGER,
    text        TEXT NOT NULL,
    language    TEXT NOT NULL,
    terms       TEXT NOT NULL,
    search      TSVECTOR NOT NULL,
    embedding   BYTEA,
    neighbours  TEXT
  );
  CREATE INDEX knowledge_passages_by_source ON knowledge_passages (source, seq);
  CREATE INDEX knowledge_passages_search ON knowledge_passages USING GIN (search);
  CREATE TABLE knowledge_terms (
    term        TEXT PRIMARY KEY,
    passages    INTEGER NOT NULL
  );
  `,
  },
  // The language a call was in (issue 39): prompts may now have a folder per language.
  both('ALTER TABLE calls ADD COLUMN language TEXT;'),
];
