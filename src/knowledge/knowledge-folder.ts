/**
 * The files of the knowledge folder: every document in it and its subfolders, each with the
 * language it is written in — a first folder named by a language's code (`de/returns.md`), a name
 * with one before its ending (`returns.de.md`), or else the default.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { isDocument } from './documents.js';
import { isKnowledgeLanguage, type KnowledgeLanguage } from './terms.js';

export interface KnowledgeFile {
  /** Relative to the folder, with "/". */
  readonly file: string;
  readonly absolute: string;
  readonly language: KnowledgeLanguage;
}

/** A folder this deep is not looked into: a link loop must not take the start with it. */
const MAX_DEPTH = 6;

export function languageOf(file: string, fallback: KnowledgeLanguage): KnowledgeLanguage {
  const [first, ...rest] = file.split('/');
  if (rest.length > 0 && first && isKnowledgeLanguage(first)) return first;
  const named = /\.([a-z]{2})\.[^.]+$/.exec(path.basename(file))?.[1];
  return named && isKnowledgeLanguage(named) ? named : fallback;
}

/** The documents under `dir`, sorted by path; none when the folder does not exist. */
export async function listKnowledgeFiles(dir: string, fallback: KnowledgeLanguage): Promise<KnowledgeFile[]> {
  const files: KnowledgeFile[] = [];
  const walk = async (folder: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT' || (error as { code?: unknown }).code === 'ENOTDIR') return;
      throw error;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const absolute = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) await walk(absolute, depth + 1);
      } else if (entry.isFile() && isDocument(entry.name)) {
        const file = path.relative(dir, absolute).split(path.sep).join('/');
        files.push({ file, absolute, language: languageOf(file, fallback) });
      }
    }
  };
  await walk(dir, 0);
  return files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/** The subfolders under `dir`, for a watch that sees changes inside them. */
export async function knowledgeSubfolders(dir: string): Promise<string[]> {
  const folders: string[] = [];
  const walk = async (folder: string, depth: number): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const absolute = path.join(folder, entry.name);
      folders.push(absolute);
      if (depth < MAX_DEPTH) await walk(absolute, depth + 1);
    }
  };
  await walk(dir, 0);
  return folders;
}
