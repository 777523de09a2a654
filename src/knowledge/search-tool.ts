import type { BusinessTool, ToolBox } from '../call/ports/business-tools.js';
import { passagePlace, type KnowledgePassage } from '../call/ports/knowledge.js';

export const SEARCH_KNOWLEDGE = 'search_knowledge';

/** The longest query the model may search with: a question, not a document. */
const QUERY_MAX_CHARS = 300;

/**
 * The model's second look at the business's documents: the passages each turn is given come from
 * the caller's words, and a question put otherwise ("return policy for opened packages") may find
 * what those missed. Answered from the index at once: no hold line, nothing changed.
 */
export function searchKnowledgeToolBox(search: (query: string) => Promise<readonly KnowledgePassage[]>, active: () => boolean): ToolBox {
  const tool: BusinessTool = {
    name: SEARCH_KNOWLEDGE,
    definition: {
      type: 'function',
      function: {
        name: SEARCH_KNOWLEDGE,
        description:
          "Searches the business's own documents (opening hours, prices, policies, delivery, FAQ) when the passages given with the caller's words " +
          'do not answer the question. Put the question in a few plain words, in the language of the documents.',
        parameters: {
          type: 'object',
          properties: { query: { type: 'string', description: 'What to look for, in a few words.' } },
          required: ['query'],
        },
      },
    },
    sideEffect: false,
    holdLines: [],
    source: 'the knowledge folder',
    async run(argumentsJson) {
      const query = queryOf(argumentsJson);
      if (!query) return { outcome: 'invalid', content: 'Give the query as {"query": "a few words"}.' };
      try {
        const passages = await search(query);
        if (passages.length === 0) return { outcome: 'ok', content: 'Nothing in the documents matches. Do not guess: say you do not know, and offer a colleague or a callback.' };
        return { outcome: 'ok', content: passages.map((p, i) => `(${i + 1}) ${passagePlace(p)}: ${p.text.replace(/\s*\n\s*/g, ' ')}`).join('\n') };
      } catch {
        return { outcome: 'error', content: 'The documents could not be searched just now. Do not guess.' };
      }
    },
  };
  const tools = Object.freeze([tool]);
  const none = Object.freeze([]);
  // Not offered while the folder holds nothing to search: a tool that can only say "nothing" costs tokens.
  return { tools: () => (active() ? tools : none) };
}

function queryOf(argumentsJson: string): string | undefined {
  try {
    const parsed = JSON.parse(argumentsJson) as { query?: unknown } | null;
    if (typeof parsed?.query === 'string' && parsed.query.trim() !== '') return parsed.query.trim().slice(0, QUERY_MAX_CHARS);
  } catch {
    // Not JSON: told to the model as invalid arguments.
  }
  return undefined;
}
