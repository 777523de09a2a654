/**
 * Markdown as sections under their heading paths, read from markdown-it's
 * token stream: its block tokens carry their lines, and its inline tokens
 * separate the words from the marks around them.
 */
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { collapse, HeadingPath, sectionPassages, type Block, type Section } from './blocks.js';
import { htmlText } from './html-passages.js';
import type { Passage } from './passage.js';

// Raw HTML is recognised as HTML so its tags can be dropped, not read as words.
const markdown = new MarkdownIt({ html: true });

/** The passages of a Markdown document (text already decoded, lines ending in "\n"). */
export function markdownPassages(text: string): Passage[] {
  const tokens = markdown.parse(blankFrontMatter(text), {});
  const path = new HeadingPath();
  const sections: Section[] = [];
  let section: { heading: string; headingLine: number | undefined; blocks: Block[] } = { heading: '', headingLine: undefined, blocks: [] };
  let row: { cells: string[]; line: number } | undefined;

  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    const line = lineOf(token);
    switch (token.type) {
      case 'heading_open':
        sections.push(section);
        section = { heading: path.enter(Number(token.tag.slice(1)), collapse(inlineText(tokens[index + 1]))), headingLine: line, blocks: [] };
        break;
      case 'paragraph_open':
        section.blocks.push({ text: inlineText(tokens[index + 1]), line: line ?? 1 });
        break;
      case 'fence':
      case 'code_block':
        section.blocks.push({ text: token.content, line: line ?? 1 });
        break;
      case 'html_block':
        section.blocks.push({ text: htmlText(token.content), line: line ?? 1 });
        break;
      // A table row stays one block: "Monday | 9:00 | 17:00" answers "when do you open on Monday", three lines would not.
      case 'tr_open':
        row = { cells: [], line: line ?? 1 };
        break;
      case 'th_open':
      case 'td_open':
        row?.cells.push(collapse(inlineText(tokens[index + 1])));
        break;
      case 'tr_close':
        if (row) section.blocks.push({ text: row.cells.filter((cell) => cell !== '').join(' | '), line: row.line });
        row = undefined;
        break;
    }
  }
  sections.push(section);
  return sectionPassages(sections);
}

/**
 * YAML front matter (a page's title and the like for a site generator) is no
 * part of what the page says; it is blanked, not cut, so the lines after it
 * keep their numbers.
 */
function blankFrontMatter(text: string): string {
  const header = /^---[ \t]*\n(?:[\s\S]*?\n)?---[ \t]*(?:\n|$)/.exec(text);
  if (!header) return text;
  return '\n'.repeat(header[0].split('\n').length - 1) + text.slice(header[0].length);
}

function lineOf(token: Token): number | undefined {
  return token.map ? token.map[0] + 1 : undefined;
}

/** The words of an inline token: emphasis, code and link marks dropped, an image by its description. */
function inlineText(token: Token | undefined): string {
  if (!token?.children) return token?.content ?? '';
  let text = '';
  for (const child of token.children) {
    switch (child.type) {
      case 'text':
      case 'text_special':
      case 'code_inline':
      case 'image':
        text += child.content;
        break;
      case 'softbreak':
      case 'hardbreak':
        text += ' ';
        break;
    }
  }
  return text;
}
