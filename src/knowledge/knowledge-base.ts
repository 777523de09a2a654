/**
 * The business's documents, searchable by each turn: the knowledge folder's files split into
 * passages (on a thread of their own), kept in the store's index, the folder watched so an edit is
 * found from the next turn on. A file that cannot be read keeps its last good version in the index
 * and is reported, with its line. Searches read a connection of their own where the store allows
 * (see features/knowledge.ts): a call's lookup never waits behind another call's record being written.
 */
import type { KnowledgeFinding, KnowledgeLookup, KnowledgePassage } from '../call/ports/knowledge.js';
import { KnowledgeTimeoutError } from '../errors.js';
import type { Logger } from '../logger.js';
import { FolderWatch } from '../prompts/folder-watch.js';
import type { FoundPassage, KnowledgeRepository, KnowledgeSource } from '../store/knowledge-repository.js';
import { DocumentReader } from './document-reader.js';
import { knowledgeSubfolders, listKnowledgeFiles } from './knowledge-folder.js';
import { fuseRankings } from './rank-fusion.js';
import { chooseTerms, POSTGRES_RANKING_BUDGET, RANKING_BUDGET } from './question-query.js';
import { TermCounts } from './term-counts.js';
import {
  ftsQuery,
  isKnowledgeLanguage,
  postgresConfiguration,
  questionWords,
  termsOf,
  tsQueryText,
  type KnowledgeLanguage,
} from './terms.js';

export interface KnowledgeOptions {
  /** The knowledge folder (KNOWLEDGE_DIR, by default `<PROMPTS_DIR>/knowledge`). */
  readonly dir: string;
  /** The language of a document whose path names none (KNOWLEDGE_LANGUAGE). */
  readonly language: KnowledgeLanguage;
  /** Passages given to the model per turn, at most (KNOWLEDGE_PASSAGES). */
  readonly passages: number;
  /** Watch the folder and index what changes (a server); a CLI looks once. */
  readonly watch: boolean;
}

/** A file that cannot be read as its kind: the index keeps its last good version, if any. */
export interface KnowledgeProblem {
  readonly file: string;
  readonly line?: number | undefined;
  readonly message: string;
}

/** What the index holds, for `npm run knowledge -- status` and the tests. */
export interface KnowledgeStatus {
  readonly dir: string;
  readonly sources: readonly KnowledgeSource[];
  readonly passages: number;
  readonly problems: readonly KnowledgeProblem[];
  /** When the folder was last compared with the index; undefined before the first time. */
  readonly syncedAt: string | undefined;
}

/** Something the index does after the documents changed: the passages' vectors (embeddings.ts). */
export interface AfterIndexing {
  changed(): void;
  /** The nearest passages of each of `ids`, by their vectors: another ranking to fuse with the words'. */
  neighbours?(ids: readonly number[]): Promise<Map<number, number[]>>;
}

/** A question of fewer words worth searching than this is taken as a follow-up: the exchange before it is searched with it. */
const FOLLOW_UP_WORDS = 3;
/** Of a lookup's passages, only those scoring at least this share of the best: the rest matched a stray word. */
const RELATIVE_FLOOR = 0.3;
/** The longest a turn waits for its passages: beyond it, the model is told nothing matched (and not to guess). */
const LOOKUP_TIMEOUT_MS = 250;
/** A reply drew on a passage when they share this many of its words (a number counts twice). */
const USED_OVERLAP = 3;

export class KnowledgeBase implements KnowledgeLookup {
  private readonly reader = new DocumentReader();
  private readonly log: Logger;
  /** Passages a search may rank (see question-query.ts): PostgreSQL ranks each of them several times slower than SQLite. */
  private readonly budget: number;
  private folderWatch: FolderWatch | undefined;
  private queue: Promise<void> = Promise.resolve();
  private problems: KnowledgeProblem[] = [];
  /** Problems already logged, by file and hash: a broken file is said once per version, not at every sync. */
  private readonly told = new Set<string>();
  private languages: KnowledgeLanguage[];
  private syncedAt: string | undefined;
  /** How many passages hold each stem, as of the last indexing: what each word of a question costs. */
  private counts = TermCounts.EMPTY;
  /** The index's files and their versions when `counts` were last read: another replica may change them. */
  private indexFingerprint: string | undefined;
  private readonly listeners: (() => void)[] = [];
  private after: AfterIndexing | undefined;
  private closed = false;
  /** Each passage's words, for telling which a reply used; by id, as long as the passage is given. */
  private readonly passageWords = new Map<number, Set<string>[]>();

  private constructor(
    /** Writes the index. */
    private readonly writer: KnowledgeRepository,
    /** Searches it (a connection of its own where the store allows). */
    private readonly searcher: KnowledgeRepository,
    private readonly options: KnowledgeOptions,
    logger: Logger,
  ) {
    this.log = logger.child({ component: 'knowledge' });
    this.budget = searcher.dialect === 'postgres' ? POSTGRES_RANKING_BUDGET : RANKING_BUDGET;
    this.languages = [options.language];
  }

  /** Indexes what changed in the folder since the index was last made, then (with `watch`) keeps it current. */
  static async open(writer: KnowledgeRepository, searcher: KnowledgeRepository, options: KnowledgeOptions, logger: Logger): Promise<KnowledgeBase> {
    const base = new KnowledgeBase(writer, searcher, options, logger);
    try {
      await base.sync();
      if (options.watch) await base.watch();
    } catch (error) {
      await base.close();
      throw error;
    }
    return base;
  }

  get active(): boolean {
    return this.counts.passages > 0;
  }

  /** Told after each indexing (what the vectors need, a test waiting for an edit). */
  onIndexed(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** The vectors' side: told when passages changed, asked for neighbours at each lookup. */
  attach(after: AfterIndexing): void {
    this.after = after;
  }

  /** Compares the folder with the index and writes what changed; one at a time. */
  sync(): Promise<void> {
    const run = this.queue.then(() => this.syncNow());
    this.queue = run.catch((error: unknown) => this.log.error({ err: error }, 'the knowledge folder could not be indexed'));
    return run;
  }

  async find(said: string, before: string | undefined): Promise<KnowledgeFinding> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      // A database that does not answer (a PostgreSQL across a network gone quiet) must not hold the caller's answer.
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new KnowledgeTimeoutError(LOOKUP_TIMEOUT_MS)), LOOKUP_TIMEOUT_MS);
      });
      const passages = await Promise.race([this.search(said, before), late]);
      return { passages, ms: performance.now() - started };
    } catch (error) {
      this.log.warn({ err: error }, 'knowledge search failed; the turn goes on without passages');
      return { passages: [], ms: performance.now() - started };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The passages for `text` (a caller's words, a model's query), best first. */
  async search(said: string, before?: string): Promise<KnowledgePassage[]> {
    const limit = this.options.passages;
    const own = questionWords(said, this.languages);
    const followUp = before !== undefined && own.length > 0 && own.length < FOLLOW_UP_WORDS;
    const text = followUp ? `${said}\n${before}` : said;
    const { stems, words } = chooseTerms(questionWords(text, this.languages), this.counts, this.budget);
    if (stems.length === 0 && words.length === 0) return [];
    const configurations = [...new Set(this.languages.map(postgresConfiguration))];
    let found = await this.searcher.search({ fts: ftsQuery(stems), tsQuery: tsQueryText(words), configurations }, limit * 3);
    // The exchange before ranks what the words find; a passage it alone finds ("calling" in the greeting) answers nothing asked.
    if (followUp && found.length > 0) {
      const asked = chooseTerms(own, this.counts, Infinity);
      const holding = await this.searcher.holding(found.map((p) => p.id), { fts: ftsQuery(asked.stems), tsQuery: tsQueryText(asked.words), configurations });
      found = found.filter((passage) => holding.has(passage.id));
    }
    const best = found[0]?.score ?? 0;
    // The passages' words, for telling which a reply used, are stemmed only then (used()): not while the caller waits.
    return (await this.fuse(found.filter((p) => p.score >= best * RELATIVE_FLOOR), limit)).slice(0, limit);
  }

  used(passages: readonly KnowledgePassage[], reply: string): KnowledgePassage[] {
    // Compared in each language on its own: one word stemmed two ways must not count twice.
    const said = this.languages.map((lang) => new Set(termsOf(reply, lang)));
    return passages.filter((passage) => {
      const words = this.passageWords.get(passage.id) ?? this.rememberWords(passage);
      return this.languages.some((_, i) => {
        let overlap = 0;
        for (const word of words[i] ?? []) if (said[i]!.has(word)) overlap += /^\d+$/.test(word) ? 2 : 1;
        return overlap >= USED_OVERLAP;
      });
    });
  }

  async status(): Promise<KnowledgeStatus> {
    const [sources, passages] = await Promise.all([this.writer.sources(), this.writer.count()]);
    return { dir: this.options.dir, sources, passages, problems: this.problems, syncedAt: this.syncedAt };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.folderWatch?.close();
    await this.queue.catch(() => undefined);
    await this.reader.close();
  }

  /** The passage's own words (not its heading: "Delivery" over every section says nothing), per language of `languages`. */
  private rememberWords(passage: KnowledgePassage): Set<string>[] {
    const words = this.languages.map((lang) => new Set(termsOf(passage.text, lang)));
    // Bounded: the words of the passages given lately, not of every passage ever found.
    if (this.passageWords.size > 1_000) this.passageWords.clear();
    this.passageWords.set(passage.id, words);
    return words;
  }

  /** The words' ranking, fused with the vectors' neighbours of its best passages when there are vectors. */
  private async fuse(found: readonly FoundPassage[], limit: number): Promise<KnowledgePassage[]> {
    const byWords = found.map(toKnowledgePassage);
    if (!this.after?.neighbours || byWords.length === 0) return byWords;
    const top = byWords.slice(0, limit).map((p) => p.id);
    const neighbours = await this.after.neighbours(top);
    // Each best passage ahead of its own neighbours: a neighbour never ties with the passage that brought it.
    const near: number[] = [];
    for (const id of top) for (const other of [id, ...(neighbours.get(id) ?? [])]) if (!near.includes(other)) near.push(other);
    if (near.length === top.length) return byWords;
    const known = new Map(byWords.map((p) => [p.id, p]));
    const missing = near.filter((id) => !known.has(id));
    for (const passage of await this.searcher.passages(missing)) known.set(passage.id, toKnowledgePassage({ ...passage, score: 0 }));
    return fuseRankings([byWords.map((p) => p.id), near]).flatMap(({ id, score }) => {
      const passage = known.get(id);
      return passage ? [{ ...passage, score }] : [];
    });
  }

  private async syncNow(): Promise<void> {
    if (this.closed) return;
    const { dir, language } = this.options;
    const files = await listKnowledgeFiles(dir, language);
    const stored = new Map((await this.writer.sources()).map((source) => [source.path, source]));
    const problems: KnowledgeProblem[] = [];
    const changed: string[] = [];
    /** Files read anew: the index may have changed under them, by this process or by a replica that wrote first. */
    let read = 0;
    for (const file of files) {
      if (this.closed) return;
      const answer = await this.reader.read({ file: file.file, absolute: file.absolute, language: file.language, knownHash: stored.get(file.file)?.hash });
      const indexedBefore = stored.delete(file.file);
      if (answer.kind === 'gone' || answer.kind === 'unchanged') continue;
      if (answer.kind === 'broken') {
        const problem = { file: file.file, line: answer.line, message: answer.message };
        problems.push(problem);
        const key = `${file.file}\0${answer.hash}`;
        if (!this.told.has(key)) {
          this.told.add(key);
          this.log.warn(
            { file: file.file, line: answer.line, problem: answer.message },
            `knowledge file ${file.file}${answer.line ? ` line ${answer.line}` : ''} cannot be read; ${
              indexedBefore ? 'its last good version stays in use' : 'it is left out until it can be read'
            }`,
          );
        }
        continue;
      }
      read++;
      const source = { path: file.file, hash: answer.hash, language: file.language, postgresConfiguration: postgresConfiguration(file.language) };
      if (await this.writer.replaceSource(source, answer.passages, new Date())) changed.push(file.file);
    }
    // What is left was indexed but is no longer in the folder.
    for (const gone of stored.keys()) {
      await this.writer.removeSource(gone);
      changed.push(gone);
    }
    this.problems = problems;
    const sources = await this.writer.sources();
    this.languages = [...new Set([this.options.language, ...sources.map((s) => s.language).filter(isKnowledgeLanguage)])];
    this.syncedAt = new Date().toISOString();
    // A replica sharing the index may have written an edit first: this one then finds its files unchanged,
    // but the index is not what it knew, and words only the edit brought must count in its ranking.
    const fingerprint = sources.map((s) => `${s.path}\0${s.hash}`).join('\n');
    const indexChanged = fingerprint !== this.indexFingerprint;
    this.indexFingerprint = fingerprint;
    if (read > 0 || changed.length > 0 || indexChanged || this.counts === TermCounts.EMPTY) {
      const { passages, terms } = await this.writer.termCounts();
      this.counts = new TermCounts(passages, terms);
    }
    if (changed.length > 0) {
      // Statistics only: the index is written whether or not the database takes them.
      await this.writer.analyze().catch((error: unknown) => this.log.warn({ err: error }, "the knowledge index's statistics could not be updated"));
      this.log.info(
        { changed, files: sources.length, passages: sources.reduce((sum, s) => sum + s.passages, 0) },
        `knowledge indexed: ${changed.length} file${changed.length === 1 ? '' : 's'} changed`,
      );
      this.after?.changed();
    }
    if (changed.length > 0 || indexChanged) this.passageWords.clear();
    for (const listener of this.listeners) listener();
  }

  private async watch(): Promise<void> {
    const resync = async (): Promise<void> => {
      await this.sync().catch(() => undefined);
      await this.folderWatch?.watchSubfolders(await knowledgeSubfolders(this.options.dir));
    };
    this.folderWatch = await FolderWatch.start(
      this.options.dir,
      this.log,
      { changed: resync, gone: () => void this.sync().catch(() => undefined), returned: resync },
      { checkIntervalMs: 2_000, debounceMs: 100 },
    );
    await this.folderWatch.watchSubfolders(await knowledgeSubfolders(this.options.dir));
  }
}

function toKnowledgePassage(found: FoundPassage): KnowledgePassage {
  return { id: found.id, source: found.source, heading: found.heading, line: found.line, page: found.page, text: found.text, score: found.score };
}
