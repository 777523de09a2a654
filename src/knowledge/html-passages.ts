/**
 * A web page as sections under its h1–h6 headings, with what a visitor reads
 * and nothing of the site around it: menus, headers, footers and scripts say
 * the same on every page and would answer every question.
 */
import { HTMLElement, parse, TextNode, type Node } from 'node-html-parser';
import { collapse, HeadingPath, LineIndex, sectionPassages, type Block, type Section } from './blocks.js';
import type { Passage } from './passage.js';

const IGNORED = new Set(['script', 'style', 'nav', 'header', 'footer', 'noscript', 'template', 'svg']);
const BLOCKS = new Set(['p', 'li', 'td', 'th', 'dd', 'dt', 'pre', 'blockquote']);
/** Elements inside a line of text: their words join their neighbours' without starting a block. */
const INLINE = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'br', 'cite', 'code', 'data', 'dfn', 'em', 'font', 'i', 'img', 'kbd', 'label', 'mark',
  'q', 's', 'samp', 'small', 'span', 'strike', 'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr',
]);
const HEADING = /^h([1-6])$/;

// Script and style hold code, not markup: parsed as text, a "<" in them cannot open a tag.
const PARSE_OPTIONS = { comment: false, blockTextElements: { script: true, style: true, noscript: true } };

type PageItem = { readonly kind: 'heading'; readonly level: number; readonly text: string; readonly line: number } | ({ readonly kind: 'block' } & Block);

/** The passages of an HTML document (text already decoded, lines ending in "\n"). */
export function htmlPassages(text: string): Passage[] {
  const { items, title } = readItems(text);
  const path = new HeadingPath();
  const hasH1 = items.some((item) => item.kind === 'heading' && item.level === 1);
  // The title sits in <head>, away from the words, so the first section starts at its first block.
  const titled = title !== undefined && title !== '' && !hasH1;
  let section: { heading: string; headingLine: number | undefined; blocks: Block[] } = {
    heading: titled ? path.enter(0, title) : '',
    headingLine: undefined,
    blocks: [],
  };
  const sections: Section[] = [];
  for (const item of items) {
    if (item.kind === 'heading') {
      sections.push(section);
      section = { heading: path.enter(item.level, item.text), headingLine: item.line, blocks: [] };
    } else {
      section.blocks.push({ text: item.text, line: item.line });
    }
  }
  sections.push(section);
  return sectionPassages(sections);
}

/** The words a reader sees in a piece of HTML (a block of raw HTML in Markdown), as one line. */
export function htmlText(html: string): string {
  return collapse(visibleText(parse(html, PARSE_OPTIONS)));
}

/** Headings and blocks in document order, and the page's <title>. */
function readItems(text: string): { items: PageItem[]; title: string | undefined } {
  const lines = new LineIndex(text);
  const items: PageItem[] = [];
  let title: string | undefined;
  let block: { parts: string[]; line: number } | undefined;
  // The line of the block element just entered, for the block its first words start.
  let blockLine: number | undefined;

  const flush = (): void => {
    if (block) items.push({ kind: 'block', text: block.parts.join(''), line: block.line });
    block = undefined;
    blockLine = undefined;
  };
  const addText = (node: TextNode): void => {
    const raw = node.rawText;
    if (block === undefined) {
      const leading = raw.length - raw.trimStart().length;
      if (leading === raw.length) return;
      block = { parts: [], line: blockLine ?? lines.lineOf(node.range[0] + leading) };
    }
    block.parts.push(node.text);
  };
  const walk = (node: Node): void => {
    if (node instanceof TextNode) {
      if (!isDeclaration(node)) addText(node);
      return;
    }
    if (!(node instanceof HTMLElement)) return;
    const tag = node.rawTagName?.toLowerCase() ?? '';
    const line = lines.lineOf(node.range[0]);
    const heading = HEADING.exec(tag);
    if (IGNORED.has(tag)) return;
    if (tag === 'title') {
      title ??= collapse(node.text);
    } else if (heading) {
      flush();
      items.push({ kind: 'heading', level: Number(heading[1]), text: htmlTextOf(node), line });
    } else if (tag === 'tr') {
      // A row stays one block: "Monday | 9:00 | 17:00" answers "when do you open on Monday", three blocks would not.
      flush();
      const cells = node.childNodes.filter(isCell).map(htmlTextOf).filter((cell) => cell !== '');
      if (cells.length > 0) items.push({ kind: 'block', text: cells.join(' | '), line });
    } else if (tag === 'br') {
      if (block) block.parts.push(' ');
    } else if (INLINE.has(tag)) {
      for (const child of node.childNodes) walk(child);
    } else {
      // Any other element (a block, a div, a section) starts and ends a run of words.
      flush();
      if (BLOCKS.has(tag)) blockLine = line;
      for (const child of node.childNodes) walk(child);
      flush();
    }
  };
  walk(parse(text, PARSE_OPTIONS));
  return { items, title };
}

function htmlTextOf(element: HTMLElement): string {
  return collapse(visibleText(element));
}

/** The words of a node, skipping what is never shown and keeping blocks apart ("<p>a</p><p>b</p>" is "a b", not "ab"). */
function visibleText(node: Node): string {
  if (node instanceof TextNode) return isDeclaration(node) ? '' : node.text;
  if (!(node instanceof HTMLElement)) return '';
  const tag = node.rawTagName?.toLowerCase() ?? '';
  if (IGNORED.has(tag) || tag === 'title') return '';
  const inner = node.childNodes.map(visibleText).join('');
  return INLINE.has(tag) && tag !== 'br' ? inner : ` ${inner} `;
}

function isCell(node: Node): node is HTMLElement {
  return node instanceof HTMLElement && (node.rawTagName?.toLowerCase() === 'td' || node.rawTagName?.toLowerCase() === 'th');
}

/** node-html-parser keeps <!DOCTYPE …> and <?xml …?> as text; they are not words. */
function isDeclaration(node: TextNode): boolean {
  return /^\s*<[!?]/.test(node.rawText);
}
