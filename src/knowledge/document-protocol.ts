import type { KnowledgeLanguage } from './terms.js';

/** What the main thread asks the documents' thread (document-worker.ts). */
export interface ReadRequest {
  readonly id: number;
  /** Relative to the knowledge folder, for messages and the index. */
  readonly file: string;
  readonly absolute: string;
  readonly language: KnowledgeLanguage;
  /** The hash the index holds of the file: the same again, and the file is not split. */
  readonly knownHash: string | undefined;
}

/** A passage as the index stores it: the passage and its stems. */
export interface ReadPassage {
  readonly heading: string;
  readonly line: number;
  readonly page?: number | undefined;
  readonly text: string;
  readonly terms: string;
}

export type ReadAnswer =
  | { readonly id: number; readonly kind: 'unchanged'; readonly hash: string }
  | { readonly id: number; readonly kind: 'read'; readonly hash: string; readonly passages: readonly ReadPassage[] }
  | { readonly id: number; readonly kind: 'broken'; readonly hash: string; readonly message: string; readonly line?: number | undefined }
  | { readonly id: number; readonly kind: 'gone' };
