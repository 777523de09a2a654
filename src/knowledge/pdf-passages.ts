/**
 * A PDF's text page by page. unpdf (PDF.js) is large and slow to load, so it
 * is imported on the first PDF only: a knowledge folder without PDFs never pays for it.
 */
import { packBlocks, type Block } from './blocks.js';
import { DocumentError, type Passage } from './passage.js';

/** The passages of a PDF: each page's paragraphs, grouped up to a passage's size, never across pages. */
export async function pdfPassages(bytes: Uint8Array): Promise<Passage[]> {
  const pages = await pageTexts(bytes);
  return pages.flatMap((text, index) =>
    packBlocks(paragraphs(text)).map((part) => ({ heading: '', line: part.line, page: index + 1, text: part.text })),
  );
}

async function pageTexts(bytes: Uint8Array): Promise<string[]> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // PDF.js takes the buffer it is given (it is detached afterwards): it gets a copy, the caller keeps its bytes.
    // verbosity 0: a damaged but readable PDF is not worth a warning on the console.
    pdf = await getDocumentProxy(bytes.slice(), { verbosity: 0 });
  } catch (error) {
    throw unreadable(error);
  }
  try {
    return (await extractText(pdf, { mergePages: false })).text;
  } catch (error) {
    throw unreadable(error);
  } finally {
    await pdf.loadingTask.destroy();
  }
}

function unreadable(error: unknown): DocumentError {
  const name = error instanceof Error ? error.name : '';
  if (name === 'PasswordException') return new DocumentError('not a readable PDF: it is protected by a password');
  return new DocumentError(`not a readable PDF: ${error instanceof Error ? error.message : String(error)}`);
}

/** What ends a sentence, perhaps inside quotes or brackets. */
const SENTENCE_END = /[.!?…:]["'”’)\]]*$/;
/** A line this much shorter than the page's longest stops before the margin: the last line of its paragraph. */
const SHORT_LINE = 0.8;

/**
 * A page's text lines in paragraphs. PDF.js gives lines, not paragraphs, and
 * rarely a blank line; a paragraph also ends at a line that ends a sentence
 * and stops short of the margin.
 */
function paragraphs(text: string): Block[] {
  const lines = text.split('\n');
  const width = lines.reduce((longest, line) => Math.max(longest, line.trim().length), 0);
  const blocks: Block[] = [];
  let open: string[] = [];
  let start = 0;
  const close = (): void => {
    if (open.length > 0) blocks.push({ text: open.join(' '), line: start });
    open = [];
  };
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return close();
    if (open.length === 0) start = index + 1;
    open.push(line);
    if (SENTENCE_END.test(line) && line.length < width * SHORT_LINE) close();
  });
  close();
  return blocks;
}
