/**
 * The business's documents (KNOWLEDGE_DIR): indexed in the store, watched, searched by each turn and
 * by the search_knowledge tool, with their vectors made in the background when an embedding model is
 * set. On SQLite the searches read a connection of their own (WAL lets it read while the calls'
 * records are written), so a lookup never waits in line behind another call's write.
 */
import OpenAI from 'openai';
import type { ToolBox } from '../call/ports/business-tools.js';
import type { Config } from '../config.js';
import { PassageEmbeddings } from '../knowledge/embeddings.js';
import { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { searchKnowledgeToolBox } from '../knowledge/search-tool.js';
import type { Logger } from '../logger.js';
import { KnowledgeRepository } from '../store/knowledge-repository.js';
import { openStore } from '../store/store.js';
import type { OpenedStack } from './opened.js';
import type { StoreFeature } from './store.js';

export interface Knowledge {
  readonly base: KnowledgeBase;
  readonly tool: ToolBox;
  readonly embeddings: PassageEmbeddings | undefined;
}

export async function openKnowledge(
  config: Config,
  logger: Logger,
  stored: StoreFeature,
  options: { watch: boolean },
  opened: OpenedStack,
): Promise<Knowledge | undefined> {
  const settings = config.knowledge;
  if (!settings) return undefined;
  const { store } = stored;
  const writer = new KnowledgeRepository(store);
  let searcher = writer;
  if (store.dialect === 'sqlite' && config.databaseFile !== ':memory:') {
    const reading = await openStore({ databaseFile: config.databaseFile }, logger, { migrate: false, claim: false });
    opened.push("the knowledge search's connection", { close: () => reading.close() });
    searcher = new KnowledgeRepository(reading);
  }
  const base = await KnowledgeBase.open(writer, searcher, { dir: settings.dir, language: settings.language, passages: settings.passages, watch: options.watch }, logger);
  opened.push('the knowledge folder', { close: () => base.close() });
  let embeddings: PassageEmbeddings | undefined;
  if (settings.embeddings) {
    const { model, baseURL, apiKey, batch } = settings.embeddings;
    // No key is a key too: a local endpoint (Ollama, vLLM) takes any.
    const client = new OpenAI({ baseURL, apiKey: apiKey ?? 'none', maxRetries: 2, timeout: 60_000 });
    embeddings = new PassageEmbeddings(client, { model, batch }, writer, searcher, logger.child({ component: 'knowledge' }));
    opened.push('the knowledge embeddings', { close: () => embeddings?.close() });
    base.attach(embeddings);
    // What the index holds already may have no vectors yet (a first start with the model, another model).
    embeddings.changed();
  }
  return { base, tool: searchKnowledgeToolBox((query) => base.search(query), () => base.active), embeddings };
}
