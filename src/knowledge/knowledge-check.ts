/**
 * A knowledge folder checked as `npm run prompts:check` checks a prompts folder: every document
 * read into passages as Hotline would read it, without a store or the documents' thread, so a
 * broken FAQ is found before a caller's question misses it. One file at a time: a folder of large
 * PDFs is never all in memory at once.
 */
import { readFile } from 'node:fs/promises';
import { readPassages } from './documents.js';
import { listKnowledgeFiles } from './knowledge-folder.js';
import { DocumentError } from './passage.js';

/** A document that cannot be read (an error), or has nothing to find in it (a warning). */
export interface KnowledgeCheckProblem {
  readonly severity: 'error' | 'warning';
  /** Starts with the file as `name` shows it, and its line when known: `knowledge/faq.yaml line 6: …`. */
  readonly message: string;
}

/** The folder in numbers, and what is wrong in it. */
export interface KnowledgeFolderCheck {
  readonly documents: number;
  readonly passages: number;
  readonly problems: readonly KnowledgeCheckProblem[];
}

/**
 * The documents of `dir`, each named in messages as `name(file)` (e.g. its path in the prompts
 * folder). The language plays no part in splitting a file: the default one is enough here.
 */
export async function checkKnowledgeFolder(dir: string, name: (file: string) => string): Promise<KnowledgeFolderCheck> {
  const files = await listKnowledgeFiles(dir, 'en');
  const problems: KnowledgeCheckProblem[] = [];
  let passages = 0;
  for (const file of files) {
    const shown = name(file.file);
    let bytes: Buffer;
    try {
      bytes = await readFile(file.absolute);
    } catch (error) {
      problems.push({ severity: 'error', message: `${shown}: cannot be read: ${(error as Error).message}` });
      continue;
    }
    try {
      const read = await readPassages(shown, bytes);
      passages += read.length;
      // Not wrong, but nothing in it is ever found: an empty file, a scanned PDF without its text.
      if (read.length === 0) problems.push({ severity: 'warning', message: `${shown}: has no text to search: nothing in it can be found` });
    } catch (error) {
      if (!(error instanceof DocumentError)) throw error;
      problems.push({ severity: 'error', message: error.message });
    }
  }
  return { documents: files.length, passages, problems };
}
