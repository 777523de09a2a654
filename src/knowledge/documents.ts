/**
 * The business's documents (prompts/knowledge/) read into passages, whatever
 * their kind. Pure: bytes in, passages out, so it can run in a worker thread;
 * every problem is a DocumentError saying which file and where.
 */
import path from 'node:path';
import { faqPassages } from './faq-passages.js';
import { htmlPassages } from './html-passages.js';
import { markdownPassages } from './markdown-passages.js';
import { DocumentError, type Passage } from './passage.js';
import { pdfPassages } from './pdf-passages.js';
import { decodeText } from './text-decode.js';
import { textPassages } from './text-passages.js';

const MB = 1024 * 1024;

interface Kind {
  /** The largest file read, in bytes: beyond it a file is more likely a mistake (an export, a dump) than a document. */
  readonly limit: number;
  readonly read: (bytes: Uint8Array) => Passage[] | Promise<Passage[]>;
}

const text = (read: (text: string) => Passage[]): Kind => ({ limit: 5 * MB, read: (bytes) => read(decodeText(bytes)) });

const KINDS: Readonly<Record<string, Kind>> = {
  '.md': text(markdownPassages),
  '.markdown': text(markdownPassages),
  '.txt': text(textPassages),
  '.yaml': text(faqPassages),
  '.yml': text(faqPassages),
  '.html': text(htmlPassages),
  '.htm': text(htmlPassages),
  // A PDF carries its fonts and pictures beside its words.
  '.pdf': { limit: 20 * MB, read: pdfPassages },
};

/** The file names read as documents, by their extension. */
export const DOCUMENT_EXTENSIONS: readonly string[] = Object.freeze(Object.keys(KINDS));

/**
 * True for a file read as a document: a known extension, in any case. Hidden
 * files (an editor's ".faq.yaml.swp", ".DS_Store") and "*.example" files (a
 * template to copy) are not, though they sit in the folder.
 */
export function isDocument(fileName: string): boolean {
  const name = path.basename(fileName);
  return !name.startsWith('.') && kindOf(name) !== undefined;
}

/**
 * The passages of one document. `file` is its path in the knowledge folder,
 * for messages; its extension says how to read `bytes`.
 * @throws DocumentError when the file cannot be read as its kind; never anything else.
 */
export async function readPassages(file: string, bytes: Uint8Array): Promise<Passage[]> {
  const kind = kindOf(file);
  if (kind === undefined) {
    throw new DocumentError(`${file}: not a kind of document Hotline reads (${DOCUMENT_EXTENSIONS.join(', ')})`);
  }
  if (bytes.byteLength > kind.limit) {
    throw new DocumentError(`${file}: ${megabytes(bytes.byteLength)} is larger than the ${megabytes(kind.limit)} a document of its kind may be`);
  }
  try {
    return await kind.read(bytes);
  } catch (error) {
    if (error instanceof DocumentError) {
      throw new DocumentError(`${file}${error.line === undefined ? '' : ` line ${error.line}`}: ${error.message}`, error.line);
    }
    // A parser's own failure is still this file's problem, not the caller's: the other documents are read.
    throw new DocumentError(`${file}: could not be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function kindOf(fileName: string): Kind | undefined {
  const extension = path.extname(fileName).toLowerCase();
  return Object.hasOwn(KINDS, extension) ? KINDS[extension] : undefined;
}

/** Rounded up, so a file just over the limit never reads as the limit itself ("5.1 MB", not "5.0 MB"). */
function megabytes(bytes: number): string {
  const tenths = Math.ceil((bytes / MB) * 10) / 10;
  return `${Number.isInteger(tenths) ? tenths : tenths.toFixed(1)} MB`;
}
