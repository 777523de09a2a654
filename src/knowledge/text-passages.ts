import { packBlocks, type Block } from './blocks.js';
import type { Passage } from './passage.js';

/** The passages of a plain text document: its paragraphs (split by blank lines), grouped up to a passage's size. */
export function textPassages(text: string): Passage[] {
  return packBlocks(paragraphs(text)).map((part) => ({ heading: '', line: part.line, text: part.text }));
}

function paragraphs(text: string): Block[] {
  const blocks: Block[] = [];
  let lines: string[] = [];
  let start = 0;
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') {
      if (lines.length > 0) blocks.push({ text: lines.join(' '), line: start });
      lines = [];
      return;
    }
    if (lines.length === 0) start = index + 1;
    lines.push(line);
  });
  if (lines.length > 0) blocks.push({ text: lines.join(' '), line: start });
  return blocks;
}
