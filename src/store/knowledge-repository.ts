/**
 * The business's documents as the store keeps them: each file's passages, searched with the
 * database's own full-text search — SQLite's FTS5 ranked by BM25 over the passages' stems, or
 * PostgreSQL's tsvector in each document's language ranked by ts_rank_cd — and, when embeddings are
 * on, each passage's vector and its nearest neighbours. What a passage's stems and a question's
 * query are is the knowledge module's (knowledge/terms.ts): this only stores and asks.
 */
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Db, StoreSchema } from './schema.js';
import type { Store } from './store.js';

/** A file of the knowledge folder as it was indexed. */
export interface KnowledgeSource {
  /** Relative to the knowledge folder, with "/". */
  readonly path: string;
  /** Of the file's bytes and what its passages were made with: unchanged, the file is not indexed again. */
  readonly hash: string;
  readonly language: string;
  readonly passages: number;
  readonly indexedAt: string;
  /** The embedding model its passages' vectors come from; undefined while they have none. */
  readonly embedded: string | undefined;
}

/** A passage to store: where it is, its words, and the stems SQLite's index holds. */
export interface PassageToStore {
  readonly heading: string;
  readonly line: number;
  readonly page?: number | undefined;
  readonly text: string;
  /** The passage's stems, joined with spaces (SQLite's index); PostgreSQL makes its own from the text. */
  readonly terms: string;
}

export interface StoredPassage {
  readonly id: number;
  readonly source: string;
  readonly heading: string;
  readonly line: number;
  readonly page: number | undefined;
  readonly text: string;
  readonly language: string;
}

/** A passage a question found, with the database's score: higher is better, comparable within one search only. */
export interface FoundPassage extends StoredPassage {
  readonly score: number;
}

/** What the two databases search with. */
export interface KnowledgeQuery {
  /** SQLite FTS5's MATCH expression over the stems. */
  readonly fts: string;
  /** PostgreSQL's tsquery text (`word:* | word`), stemmed by each of `configurations`. */
  readonly tsQuery: string;
  readonly configurations: readonly string[];
}

/** Rows per INSERT: a batch of passages is one statement, and the event loop is free between batches. */
const INSERT_BATCH = 200;

interface PassageRow {
  id: number | string;
  source: string;
  heading: string;
  line: number;
  page: number | null;
  text: string;
  language: string;
}

const toPassage = (row: PassageRow): StoredPassage => ({
  id: Number(row.id),
  source: row.source,
  heading: row.heading,
  line: row.line,
  page: row.page ?? undefined,
  text: row.text,
  language: row.language,
});

export class KnowledgeRepository {
  private readonly db: Db;

  constructor(private readonly store: Pick<Store, 'db' | 'dialect'>) {
    this.db = store.db;
  }

  get dialect(): Store['dialect'] {
    return this.store.dialect;
  }

  async sources(): Promise<KnowledgeSource[]> {
    const { rows } = await sql<{ path: string; hash: string; language: string; passages: number; indexed_at: string; embedded: string | null }>`
      SELECT path, hash, language, passages, indexed_at, embedded FROM knowledge_sources ORDER BY path`.execute(this.db);
    return rows.map((row) => ({
      path: row.path,
      hash: row.hash,
      language: row.language,
      passages: Number(row.passages),
      indexedAt: row.indexed_at,
      embedded: row.embedded ?? undefined,
    }));
  }

  /**
   * The file's passages replace what was stored of it, in one transaction: a search sees the old
   * version or the new one, never half. Nothing is written when the stored hash is `hash` already
   * (another replica indexed the same file first). `postgresConfiguration`: the language's text
   * search configuration. Returns whether it wrote.
   */
  async replaceSource(
    source: { readonly path: string; readonly hash: string; readonly language: string; readonly postgresConfiguration: string },
    passages: readonly PassageToStore[],
    at: Date,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await this.lock(trx);
      const { rows } = await sql<{ hash: string }>`SELECT hash FROM knowledge_sources WHERE path = ${source.path}`.execute(trx);
      if (rows[0]?.hash === source.hash) return false;
      await this.countTerms(trx, source.path, -1);
      await sql`DELETE FROM knowledge_passages WHERE source = ${source.path}`.execute(trx);
      for (let from = 0; from < passages.length; from += INSERT_BATCH) {
        const values = passages.slice(from, from + INSERT_BATCH).map((p, i) => {
          const common = sql`${source.path}, ${from + i}, ${p.heading}, ${p.line}, ${p.page ?? null}, ${p.text}, ${source.language}, ${p.terms}`;
          return this.store.dialect === 'postgres'
            ? sql`(${common}, to_tsvector(${source.postgresConfiguration}::regconfig, ${`${p.heading}\n${p.text}`}))`
            : sql`(${common})`;
        });
        const columns = this.store.dialect === 'postgres' ? sql`source, seq, heading, line, page, text, language, terms, search` : sql`source, seq, heading, line, page, text, language, terms`;
        await sql`INSERT INTO knowledge_passages (${columns}) VALUES ${sql.join(values)}`.execute(trx);
      }
      await this.countTerms(trx, source.path, 1);
      await sql`INSERT INTO knowledge_sources (path, hash, language, passages, indexed_at, embedded)
        VALUES (${source.path}, ${source.hash}, ${source.language}, ${passages.length}, ${at.toISOString()}, NULL)
        ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, language = excluded.language, passages = excluded.passages,
          indexed_at = excluded.indexed_at, embedded = NULL`.execute(trx);
      return true;
    });
  }

  /** The file is gone from the folder: so are its passages. */
  async removeSource(path: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.lock(trx);
      await this.countTerms(trx, path, -1);
      await sql`DELETE FROM knowledge_passages WHERE source = ${path}`.execute(trx);
      await sql`DELETE FROM knowledge_sources WHERE path = ${path}`.execute(trx);
    });
  }

  /** The best `limit` passages for `query`, best first. */
  async search(query: KnowledgeQuery, limit: number): Promise<FoundPassage[]> {
    if (this.store.dialect === 'sqlite') {
      if (query.fts === '') return [];
      // bm25() is lower for a better match: its negation is the score. Ranked first, joined after: the
      // passages' text is read for the best few only, not for every passage a word is in.
      const { rows } = await sql<PassageRow & { rank: number }>`
        SELECT p.id, p.source, p.heading, p.line, p.page, p.text, p.language, f.rank
        FROM (SELECT rowid AS id, bm25(knowledge_fts) AS rank FROM knowledge_fts WHERE knowledge_fts MATCH ${query.fts} ORDER BY rank LIMIT ${limit}) f
        JOIN knowledge_passages p ON p.id = f.id ORDER BY f.rank`.execute(this.db);
      return rows.map((row) => ({ ...toPassage(row), score: -row.rank }));
    }
    if (query.tsQuery === '' || query.configurations.length === 0) return [];
    const { rows } = await sql<PassageRow & { score: number }>`
      SELECT p.id, p.source, p.heading, p.line, p.page, p.text, p.language, ts_rank_cd(p.search, q.asked) AS score
      FROM knowledge_passages p, (SELECT ${this.asked(query)} AS asked) q
      WHERE p.search @@ q.asked ORDER BY score DESC, p.id LIMIT ${limit}`.execute(this.db);
    return rows.map((row) => ({ ...toPassage(row), score: Number(row.score) }));
  }

  /** Of `ids`, the passages `query` finds too. */
  async holding(ids: readonly number[], query: KnowledgeQuery): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    if (this.store.dialect === 'sqlite') {
      if (query.fts === '') return new Set();
      const { rows } = await sql<{ id: number }>`
        SELECT rowid AS id FROM knowledge_fts WHERE knowledge_fts MATCH ${query.fts} AND rowid IN (${sql.join(ids)})`.execute(this.db);
      return new Set(rows.map((row) => Number(row.id)));
    }
    if (query.tsQuery === '' || query.configurations.length === 0) return new Set();
    const { rows } = await sql<{ id: number | string }>`
      SELECT id FROM knowledge_passages WHERE id IN (${sql.join(ids)}) AND search @@ (${this.asked(query)})`.execute(this.db);
    return new Set(rows.map((row) => Number(row.id)));
  }

  async passages(ids: readonly number[]): Promise<StoredPassage[]> {
    if (ids.length === 0) return [];
    const { rows } = await sql<PassageRow>`
      SELECT id, source, heading, line, page, text, language FROM knowledge_passages WHERE id IN (${sql.join(ids)})`.execute(this.db);
    return rows.map(toPassage);
  }

  /** PostgreSQL's tsquery: the words stemmed by each language's configuration, any of them. */
  private asked(query: KnowledgeQuery): RawBuilder<unknown> {
    return sql.join(
      query.configurations.map((configuration) => sql`to_tsquery(${configuration}::regconfig, ${query.tsQuery})`),
      sql` || `,
    );
  }

  async count(): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM knowledge_passages`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Passages of sources not yet embedded with `model`, a batch at a time, those after the id `after`.
   * A caller walks on from the last id it got: a passage stays in this list, vector or not, until
   * its whole source is marked embedded, so asking from the start again would give the same batch
   * for ever.
   */
  async unembedded(model: string, limit: number, after = 0): Promise<{ id: number; source: string; heading: string; text: string }[]> {
    const { rows } = await sql<{ id: number | string; source: string; heading: string; text: string }>`
      SELECT p.id, p.source, p.heading, p.text FROM knowledge_passages p JOIN knowledge_sources s ON s.path = p.source
      WHERE p.id > ${after} AND (p.embedding IS NULL OR s.embedded IS NULL OR s.embedded <> ${model})
      ORDER BY p.id LIMIT ${limit}`.execute(this.db);
    return rows.map((row) => ({ ...row, id: Number(row.id) }));
  }

  /**
   * Stores vectors, each for the passage of that id if it still has the heading and text embedded: a
   * passage replaced meanwhile is skipped. By id alone is not enough: SQLite gives a new row the
   * highest id plus one, so the passages of the file indexed last, edited while being embedded, come
   * back under the same ids — and would keep the old text's vectors.
   */
  async setEmbeddings(vectors: ReadonlyMap<number, { readonly heading: string; readonly text: string; readonly vector: Float32Array }>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const [id, { heading, text, vector }] of vectors) {
        const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
        await sql`UPDATE knowledge_passages SET embedding = ${bytes} WHERE id = ${id} AND heading = ${heading} AND text = ${text}`.execute(trx);
      }
    });
  }

  /** Every source whose passages all have vectors now is marked embedded with `model`. */
  async markEmbedded(model: string): Promise<void> {
    await sql`UPDATE knowledge_sources SET embedded = ${model}
      WHERE NOT EXISTS (SELECT 1 FROM knowledge_passages p WHERE p.source = knowledge_sources.path AND p.embedding IS NULL)`.execute(this.db);
  }

  /** Every passage's vector, for the neighbours' computation. */
  async vectors(): Promise<{ id: number; vector: Float32Array }[]> {
    const { rows } = await sql<{ id: number | string; embedding: Uint8Array }>`
      SELECT id, embedding FROM knowledge_passages WHERE embedding IS NOT NULL ORDER BY id`.execute(this.db);
    return rows.map((row) => {
      // A copy, aligned: the driver's buffer may start at any byte.
      const bytes = new Uint8Array(row.embedding);
      return { id: Number(row.id), vector: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4) };
    });
  }

  async setNeighbours(neighbours: ReadonlyMap<number, readonly number[]>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const [id, ids] of neighbours) await sql`UPDATE knowledge_passages SET neighbours = ${ids.join(',')} WHERE id = ${id}`.execute(trx);
    });
  }

  /** Whether a passage with a vector has no neighbours computed (a process stopped while computing them). */
  async lacksNeighbours(): Promise<boolean> {
    const { rows } = await sql<{ found: number }>`
      SELECT 1 AS found FROM knowledge_passages WHERE embedding IS NOT NULL AND neighbours IS NULL LIMIT 1`.execute(this.db);
    return rows.length > 0;
  }

  /** The nearest passages of each of `ids`, nearest first, where they are known. */
  async neighboursOf(ids: readonly number[]): Promise<Map<number, number[]>> {
    const found = new Map<number, number[]>();
    if (ids.length === 0) return found;
    const { rows } = await sql<{ id: number | string; neighbours: string }>`
      SELECT id, neighbours FROM knowledge_passages WHERE id IN (${sql.join(ids)}) AND neighbours IS NOT NULL AND neighbours <> ''`.execute(this.db);
    for (const row of rows) found.set(Number(row.id), row.neighbours.split(',').map(Number));
    return found;
  }

  /**
   * How many passages hold each stem, and how many there are: a search leaves out the words whose
   * passages would cost more to rank than they tell (see knowledge-base.ts).
   */
  async termCounts(): Promise<{ passages: number; terms: Map<string, number> }> {
    const { rows } =
      this.store.dialect === 'sqlite'
        ? await sql<{ term: string; passages: number }>`SELECT term, doc AS passages FROM knowledge_vocab`.execute(this.db)
        : await sql<{ term: string; passages: number }>`SELECT term, passages FROM knowledge_terms WHERE passages > 0`.execute(this.db);
    return { passages: await this.count(), terms: new Map(rows.map((row) => [row.term, Number(row.passages)])) };
  }

  /** PostgreSQL's count of the stems in `source`'s passages, by `sign` (SQLite's fts5vocab keeps its own). */
  private async countTerms(trx: Transaction<StoreSchema>, source: string, sign: 1 | -1): Promise<void> {
    if (this.store.dialect !== 'postgres') return;
    await sql`INSERT INTO knowledge_terms (term, passages)
      SELECT term, ${sign} * COUNT(DISTINCT p.id) FROM knowledge_passages p, unnest(string_to_array(p.terms, ' ')) AS term
      WHERE p.source = ${source} AND term <> '' GROUP BY term
      ON CONFLICT (term) DO UPDATE SET passages = knowledge_terms.passages + excluded.passages`.execute(trx);
  }

  /**
   * PostgreSQL's statistics of the index brought up to date: without them, after a first indexing
   * and until autovacuum comes by, the planner guesses a question matches a quarter of the passages
   * and reads them all (16 ms at 10,000 passages, against 3 ms through the GIN index).
   */
  async analyze(): Promise<void> {
    if (this.store.dialect === 'postgres') await sql`ANALYZE knowledge_passages, knowledge_terms`.execute(this.db);
  }

  /** Writers of the index one at a time across replicas (PostgreSQL); SQLite's transaction holds the file's lock already. */
  private async lock(trx: Transaction<StoreSchema>): Promise<void> {
    if (this.store.dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtext('hotline_knowledge'))`.execute(trx);
  }
}
