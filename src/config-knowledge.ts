/**
 * The business's documents the agent answers from (docs/knowledge.md): where they are, the language
 * of those whose path names none, how many passages a turn is given, and the optional embeddings. A
 * group of config.ts's environment schema, kept with the part of `Config` it fills.
 */
import path from 'node:path';
import { z } from 'zod';
import { KNOWLEDGE_LANGUAGES, type KnowledgeLanguage } from './knowledge/terms.js';
import { boolean, int, text, url } from './config-values.js';
import { variableDocs } from './config-sections.js';

const passagesError = 'KNOWLEDGE_PASSAGES must be a whole number of passages, 1–10';

export const KnowledgeEnv = z.object({
  KNOWLEDGE: boolean('KNOWLEDGE', true).register(variableDocs, {
    section: 'knowledge',
    doc: `Answer from the business's documents in KNOWLEDGE_DIR: each turn's request is given the passages the caller's
      words find (or is told that nothing matches), and the model may search them with the search_knowledge tool.
      false: no index, no search, no tool. An empty or missing folder costs nothing either.`,
  }),
  KNOWLEDGE_DIR: text.min(1).optional().register(variableDocs, {
    section: 'knowledge',
    doc: `Folder of the documents: Markdown, plain text, FAQ files (question/answer YAML), HTML and PDF, in subfolders
      too. A first subfolder named by a language code (de/) holds that language's documents. Watched: an edit is
      searchable from the next turn; a file that cannot be read keeps its last good version.`,
    example: './prompts/knowledge',
    unsetMeans: 'knowledge/ in PROMPTS_DIR',
  }),
  KNOWLEDGE_LANGUAGE: z
    .enum(KNOWLEDGE_LANGUAGES as [KnowledgeLanguage, ...KnowledgeLanguage[]], {
      error: `KNOWLEDGE_LANGUAGE must be one of ${KNOWLEDGE_LANGUAGES.join(', ')}`,
    })
    .default('en')
    .register(variableDocs, {
      section: 'knowledge',
      doc: `The language of the documents whose path names none (not in a de/ folder, not named like returns.de.md):
        its stemming and stop words are used to search them (${KNOWLEDGE_LANGUAGES.join(', ')}).`,
    }),
  KNOWLEDGE_PASSAGES: z.coerce
    .number({ error: passagesError })
    .int({ error: passagesError })
    .min(1, { error: passagesError })
    .max(10, { error: passagesError })
    .default(3)
    .register(variableDocs, {
      section: 'knowledge',
      doc: 'Passages given to the model per turn, at most: the best ones, each up to about 1,000 characters.',
    }),
  KNOWLEDGE_EMBEDDINGS_MODEL: text.min(1).optional().register(variableDocs, {
    section: 'knowledge',
    doc: `An embedding model of an OpenAI-compatible /embeddings endpoint: the passages are embedded when the documents
      change (never while a caller waits), and a lookup adds the passages nearest its best ones, fused by rank.`,
    example: 'text-embedding-3-small',
    unsetMeans: 'the words alone',
  }),
  KNOWLEDGE_EMBEDDINGS_URL: url('KNOWLEDGE_EMBEDDINGS_URL', 'http://localhost:11434/v1').register(variableDocs, {
    section: 'knowledge',
    doc: 'The endpoint of KNOWLEDGE_EMBEDDINGS_MODEL (its base URL, as OPENAI_BASE_URL).',
    example: 'http://localhost:11434/v1',
    unsetMeans: 'OPENAI_BASE_URL, or OpenAI',
  }),
  KNOWLEDGE_EMBEDDINGS_API_KEY: text.min(1).optional().register(variableDocs, {
    section: 'knowledge',
    doc: 'The API key of that endpoint.',
    unsetMeans: 'OPENAI_API_KEY',
  }),
  KNOWLEDGE_EMBEDDINGS_BATCH: int('KNOWLEDGE_EMBEDDINGS_BATCH', 1, 64, ' of passages').register(variableDocs, {
    section: 'knowledge',
    doc: 'Passages embedded per request.',
  }),
});

export interface KnowledgeConfig {
  knowledge:
    | {
        dir: string;
        language: KnowledgeLanguage;
        passages: number;
        embeddings: { model: string; baseURL: string | undefined; apiKey: string | undefined; batch: number } | undefined;
      }
    | undefined;
}

export function knowledgeConfigOf(
  e: z.output<typeof KnowledgeEnv> & { OPENAI_API_KEY?: string | undefined; OPENAI_BASE_URL?: string | undefined },
  promptsDir: string,
): KnowledgeConfig {
  if (!e.KNOWLEDGE) return { knowledge: undefined };
  return {
    knowledge: {
      dir: path.resolve(e.KNOWLEDGE_DIR ?? path.join(promptsDir, 'knowledge')),
      language: e.KNOWLEDGE_LANGUAGE,
      passages: e.KNOWLEDGE_PASSAGES,
      embeddings: e.KNOWLEDGE_EMBEDDINGS_MODEL
        ? {
            model: e.KNOWLEDGE_EMBEDDINGS_MODEL,
            baseURL: e.KNOWLEDGE_EMBEDDINGS_URL ?? e.OPENAI_BASE_URL,
            apiKey: e.KNOWLEDGE_EMBEDDINGS_API_KEY ?? e.OPENAI_API_KEY,
            batch: e.KNOWLEDGE_EMBEDDINGS_BATCH,
          }
        : undefined,
    },
  };
}
