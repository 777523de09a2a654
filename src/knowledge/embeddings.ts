/**
 * The passages' vectors, from any OpenAI-compatible `/embeddings` endpoint, made when the documents
 * change and never on a call's path: a caller's question is not embedded (that would be a round
 * trip of 100–300 ms before every answer). The vectors rank differently instead: each passage keeps
 * the ids of the passages nearest it, and a lookup fuses the words' ranking with the neighbours of
 * its best passages (knowledge-base.ts) — a passage that says the same in other words comes along.
 */
import type OpenAI from 'openai';
import type { Logger } from '../logger.js';
import type { KnowledgeRepository } from '../store/knowledge-repository.js';
import { spawnModule } from '../worker-module.js';
import type { AfterIndexing } from './knowledge-base.js';
import type { NearestOptions } from './nearest.js';

export interface EmbeddingSettings {
  readonly model: string;
  /** Passages per request. */
  readonly batch: number;
}

/** Each passage keeps this many nearest others. */
const NEIGHBOURS = 3;
/** Nearer than this (cosine) only: a passage with nothing like it has no neighbours. */
const MIN_SIMILARITY = 0.5;
/**
 * Beyond this many passages the neighbours are not computed: the work grows with their square (5,000
 * passages of 1,536 dimensions are about 40 s of a core, on a thread of its own), and the words'
 * ranking alone is used.
 */
const MAX_PASSAGES_FOR_NEIGHBOURS = 5_000;

export class PassageEmbeddings implements AfterIndexing {
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  /** Ends a request in flight at close: the SDK would wait up to its timeout, a minute, and Hotline's stop with it. */
  private readonly stopping = new AbortController();
  /** Requests made to the endpoint since start: the test counts them, the status shows them. */
  requests = 0;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly client: OpenAI,
    private readonly settings: EmbeddingSettings,
    private readonly repository: KnowledgeRepository,
    private readonly searcher: KnowledgeRepository,
    private readonly log: Logger,
  ) {}

  /** The documents changed: vectors for the passages that have none, then the neighbours, in the background. */
  changed(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.changed();
      }
    });
  }

  /** Told each time the vectors and neighbours are up to date. */
  onDone(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Resolves once nothing is being embedded (a test, the CLI). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  neighbours(ids: readonly number[]): Promise<Map<number, number[]>> {
    return this.searcher.neighboursOf(ids);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    await this.running?.catch(() => undefined);
  }

  private async run(): Promise<void> {
    try {
      const embedded = await this.embedMissing();
      if (this.closed) return;
      // Or without new vectors, when a process stopped while computing them: nothing else would, until the next change.
      if (embedded > 0 || (await this.repository.lacksNeighbours())) await this.computeNeighbours();
      for (const listener of this.listeners) listener();
    } catch (error) {
      // Closing ended the request: not the endpoint's failure.
      if (this.closed) return;
      // The words' ranking still works: the vectors are tried again at the next change.
      this.log.warn({ err: error, model: this.settings.model }, 'knowledge passages could not be embedded; search uses the words alone until the next change');
    }
  }

  private async embedMissing(): Promise<number> {
    const { model, batch } = this.settings;
    let embedded = 0;
    // The passages are walked by id: those embedded stay listed until their source is marked, at the end.
    let after = 0;
    for (;;) {
      if (this.closed) return embedded;
      const passages = await this.repository.unembedded(model, batch, after);
      if (passages.length === 0) break;
      after = passages.at(-1)!.id;
      this.requests++;
      const answer = await this.client.embeddings.create(
        {
          model,
          input: passages.map((p) => (p.heading ? `${p.heading}\n${p.text}` : p.text)),
          // Floats, said: left out, the SDK asks for base64 and decodes the answer as base64 whatever it
          // is, and endpoints such as Ollama's answer floats all the same — vectors of garbage.
          encoding_format: 'float',
        },
        { signal: this.stopping.signal },
      );
      const vectors = new Map<number, { heading: string; text: string; vector: Float32Array }>();
      for (const item of answer.data) {
        const passage = passages[item.index];
        if (passage) vectors.set(passage.id, { heading: passage.heading, text: passage.text, vector: normalised(item.embedding) });
      }
      if (vectors.size < passages.length) throw new Error(`the endpoint answered ${vectors.size} vectors for ${passages.length} passages`);
      await this.repository.setEmbeddings(vectors);
      embedded += vectors.size;
    }
    await this.repository.markEmbedded(model);
    if (embedded > 0) this.log.info({ model, passages: embedded, requests: this.requests }, 'knowledge passages embedded');
    return embedded;
  }

  private async computeNeighbours(): Promise<void> {
    const all = await this.repository.vectors();
    if (all.length > MAX_PASSAGES_FOR_NEIGHBOURS) {
      this.log.warn({ passages: all.length, max: MAX_PASSAGES_FOR_NEIGHBOURS }, 'too many passages to compute their neighbours; search uses the words alone');
      return;
    }
    const neighbours = await onThread(all, { count: NEIGHBOURS, minSimilarity: MIN_SIMILARITY }, this.stopping.signal);
    if (this.closed) return;
    await this.repository.setNeighbours(neighbours);
  }
}

/** The neighbours of every vector, computed on a thread of its own; ended with `signal`. */
function onThread(all: readonly { id: number; vector: Float32Array }[], options: NearestOptions, signal: AbortSignal): Promise<Map<number, number[]>> {
  return new Promise((resolve, reject) => {
    const worker = spawnModule(import.meta.url, 'neighbours-worker', { ids: all.map((v) => v.id), vectors: all.map((v) => v.vector), options });
    const stop = (): void => void worker.terminate();
    signal.addEventListener('abort', stop, { once: true });
    worker.once('message', (pairs: [number, number[]][]) => resolve(new Map(pairs)));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      signal.removeEventListener('abort', stop);
      reject(new Error(`the neighbours' thread ended (exit code ${code}) before it answered`));
    });
  });
}

/** Unit length, so that a dot product is the cosine. */
function normalised(values: readonly number[]): Float32Array {
  let norm = 0;
  for (const v of values) norm += v * v;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return Float32Array.from(values, (v) => v * scale);
}
