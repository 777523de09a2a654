/**
 * The business's documents read into passages: each kind from real bytes (a
 * PDF written here by hand, with its cross-reference table), the headings and
 * lines a passage is found by, the cuts of long sections, and every problem a
 * DocumentError that says which line.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_EXTENSIONS, isDocument, readPassages } from '../src/knowledge/documents.js';
import { DocumentError, type Passage } from '../src/knowledge/passage.js';

const MB = 1024 * 1024;
const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text);
const read = (file: string, text: string): Promise<Passage[]> => readPassages(file, bytesOf(text));

/** The DocumentError `promise` rejects with (failing the test if it resolves or rejects with anything else). */
async function documentError(promise: Promise<unknown>): Promise<DocumentError> {
  const error: unknown = await promise.then(
    (passages) => expect.fail(`expected a DocumentError, got ${JSON.stringify(passages)}`),
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(DocumentError);
  return error as DocumentError;
}

let folder: string;
beforeAll(async () => {
  folder = await fs.mkdtemp(path.join(os.tmpdir(), 'hotline-knowledge-'));
});
afterAll(async () => {
  await fs.rm(folder, { recursive: true, force: true });
});

/** Writes `content` as prompts/knowledge/`name` would hold it and reads it back as the index will. */
async function readFile(name: string, content: string | Uint8Array): Promise<Passage[]> {
  const file = path.join(folder, name);
  await fs.writeFile(file, content);
  return readPassages(name, new Uint8Array(await fs.readFile(file)));
}

describe('which files are documents', () => {
  it('goes by the extension in any case, never a hidden file or an example', () => {
    expect(DOCUMENT_EXTENSIONS).toEqual(['.md', '.markdown', '.txt', '.yaml', '.yml', '.html', '.htm', '.pdf']);
    for (const name of ['returns.md', 'Guide.MARKDOWN', 'notes.txt', 'faq.yaml', 'faq.YML', 'page.html', 'page.HTM', 'menu.Pdf', 'sub/dir/faq.yaml']) {
      expect(isDocument(name), name).toBe(true);
    }
    for (const name of ['.faq.yaml', '.DS_Store', '.hidden.md', 'faq.yaml.example', 'returns.md.example', 'photo.jpg', 'notes', 'faq.yaml.swp', 'sub/.draft.md']) {
      expect(isDocument(name), name).toBe(false);
    }
  });

  it('refuses to read a file of another kind', async () => {
    const error = await documentError(read('photo.jpg', 'x'));
    expect(error.message).toBe('photo.jpg: not a kind of document Hotline reads (.md, .markdown, .txt, .yaml, .yml, .html, .htm, .pdf)');
  });
});

describe('Markdown', () => {
  it('gives each section under its heading path, from the heading line, front matter counted in the lines', async () => {
    const text = [
      '---', // 1
      'title: Returns', // 2
      '---', // 3
      'Welcome to the **shop**.', // 4
      '', // 5
      '# Returns', // 6
      '', // 7
      'Bring it back within *30 days*.', // 8
      '', // 9
      '## Refunds', // 10
      '', // 11
      '- Paid back to the `card` you used.', // 12
      '- See [our policy](https://example.com/policy) for details.', // 13
      '', // 14
      '## Exchanges', // 15
      '## Gift cards', // 16
      '', // 17
      '| Card | Valid |', // 18
      '|------|-------|', // 19
      '| Paper | 1 year |', // 20
      '', // 21
      '```js', // 22
      'code   here', // 23
      '```', // 24
      '# Contact', // 25
      '### Phone', // 26
      'Call us on', // 27
      '555 0100.', // 28
      '## Post', // 29
      '<!-- not for callers --> <b>12 High Street</b>', // 30
      '', // 31
      '---', // 32
      '', // 33
      '![The shop front](front.jpg)', // 34
    ].join('\n');
    expect(await readFile('returns.md', text)).toEqual([
      { heading: '', line: 4, text: 'Welcome to the shop.' },
      { heading: 'Returns', line: 6, text: 'Bring it back within 30 days.' },
      { heading: 'Returns › Refunds', line: 10, text: 'Paid back to the card you used.\nSee our policy for details.' },
      // "Exchanges" has nothing under it before the next heading: no passage.
      { heading: 'Returns › Gift cards', line: 16, text: 'Card | Valid\nPaper | 1 year\ncode here' },
      { heading: 'Contact › Phone', line: 26, text: 'Call us on 555 0100.' },
      { heading: 'Contact › Post', line: 29, text: '12 High Street\nThe shop front' },
    ]);
  });

  it('counts lines the same with Windows line endings and without front matter, and a section before any heading starts at its first block', async () => {
    const passages = await read('a.markdown', '\r\n\r\nFirst words.\r\n\r\n## Later\r\nMore.\r\n');
    expect(passages).toEqual([
      { heading: '', line: 3, text: 'First words.' },
      { heading: 'Later', line: 5, text: 'More.' },
    ]);
  });

  it('reads a "---" that never closes as a rule, not as front matter', async () => {
    expect(await read('a.md', '---\nStill here.\n')).toEqual([{ heading: '', line: 2, text: 'Still here.' }]);
  });

  it('cuts a long section at block boundaries, each part under its heading from its first block', async () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${String(i).padStart(2, '0')} ${'word '.repeat(36)}end.`);
    expect(paragraphs[0]).toHaveLength(197);
    // "# Menu" on line 1, paragraph i on line 3 + 2i.
    const passages = await read('menu.md', `# Menu\n\n${paragraphs.join('\n\n')}\n`);
    expect(passages.map((p) => p.heading)).toEqual(['Menu', 'Menu', 'Menu']);
    // Five paragraphs and four "\n" are 989 characters; a sixth would pass 1,000.
    expect(passages.map((p) => p.line)).toEqual([1, 13, 23]);
    expect(passages.map((p) => p.text)).toEqual([paragraphs.slice(0, 5).join('\n'), paragraphs.slice(5, 10).join('\n'), paragraphs.slice(10).join('\n')]);
  });

  it('cuts a block longer than a passage at sentence ends, and a sentence without any at spaces or anywhere', async () => {
    const sentences = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} tells the caller something useful!`);
    const long = sentences.join(' ');
    const unbroken = 'x'.repeat(2500);
    const passages = await read('long.md', `## Policy\n\nShort first.\n\n${long}\n\n${unbroken}\n`);
    expect(passages.every((p) => p.heading === 'Policy' && p.text.length <= 1000)).toBe(true);
    // The short block shares the first part; the long one's sentences follow in parts that end at a sentence.
    expect(passages[0]!.line).toBe(1);
    expect(passages[0]!.text.startsWith('Short first.\nSentence number 0 ')).toBe(true);
    const sentenceParts = passages.filter((p) => p.text.includes('Sentence'));
    expect(sentenceParts.length).toBe(2);
    expect(sentenceParts[1]!.line).toBe(5);
    for (const part of sentenceParts) expect(part.text.endsWith('useful!')).toBe(true);
    expect(sentenceParts.map((p) => p.text.replace('Short first.\n', '')).join(' ')).toBe(long);
    const hard = passages.filter((p) => p.text.startsWith('x'));
    expect(hard.map((p) => [p.line, p.text.length])).toEqual([[7, 1000], [7, 1000], [7, 500]]);
  });

  it('keeps the outer headings when a level is skipped, and drops them when a higher one comes', async () => {
    const passages = await read('a.md', '# A\n### C\nunder c\n## B\nunder b\n# D\nunder d\n');
    expect(passages.map((p) => [p.heading, p.line, p.text])).toEqual([
      ['A › C', 2, 'under c'],
      ['A › B', 4, 'under b'],
      ['D', 6, 'under d'],
    ]);
  });
});

describe('plain text', () => {
  it('groups paragraphs split by blank lines, from the first paragraph’s line', async () => {
    expect(await readFile('notes.txt', '\n\nFirst paragraph\n  wraps   here.\n\n \t\nSecond one.\n')).toEqual([
      { heading: '', line: 3, text: 'First paragraph wraps here.\nSecond one.' },
    ]);
  });

  it('starts a new passage where the next paragraph would pass 1,000 characters', async () => {
    const paragraph = `${'a'.repeat(200)} ${'b'.repeat(199)}`;
    const passages = await read('notes.txt', [paragraph, paragraph, paragraph].join('\n\n'));
    // Two are 801 characters with their "\n"; the third would make 1,202.
    expect(passages.map((p) => [p.line, p.text])).toEqual([
      [1, `${paragraph}\n${paragraph}`],
      [5, paragraph],
    ]);
  });
});

describe('FAQ YAML', () => {
  it('reads a top-level list, with question/answer or q/a, each entry from its line', async () => {
    const text = [
      '# Our questions', // 1
      '- question: Do you deliver?', // 2
      '  answer: Yes, within ten miles.', // 3
      '', // 4
      '- q: Can I pay by card?', // 5
      '  a: |', // 6
      '    Yes.', // 7
      '    Not American Express.', // 8
    ].join('\n');
    expect(await readFile('faq.yaml', text)).toEqual([
      { heading: 'Do you deliver?', line: 2, text: 'Do you deliver?\nYes, within ten miles.' },
      { heading: 'Can I pay by card?', line: 5, text: 'Can I pay by card?\nYes. Not American Express.' },
    ]);
  });

  it('reads the list under "questions:" or "faq:"', async () => {
    const questions = 'questions:\n  - question: Where are you?\n    answer: >\n      12 High Street,\n      by the station.\n';
    expect(await read('faq.yml', questions)).toEqual([
      { heading: 'Where are you?', line: 2, text: 'Where are you?\n12 High Street, by the station.' },
    ]);
    const faq = 'faq:\n\n  - q: Open on Sunday?\n    a: "No."\n  - {q: Parking?, a: Behind the shop.}\n';
    expect(await read('faq.yaml', faq)).toEqual([
      { heading: 'Open on Sunday?', line: 3, text: 'Open on Sunday?\nNo.' },
      { heading: 'Parking?', line: 5, text: 'Parking?\nBehind the shop.' },
    ]);
  });

  it('has no passages while it holds nothing', async () => {
    for (const text of ['', '# nothing yet\n', '[]\n', 'questions: []\n', 'faq:\n']) expect(await read('faq.yaml', text), text).toEqual([]);
  });

  it('says the line of a YAML error', async () => {
    const error = await documentError(read('faq.yaml', '- question: Open late?\n  answer: Open: until nine\n'));
    expect(error.line).toBe(2);
    expect(error.message).toBe('faq.yaml line 2: not valid YAML: Nested mappings are not allowed in compact mappings');
  });

  it("says the line of an entry without its answer, or whose answer is not text", async () => {
    const missing = await documentError(read('help/faq.yaml', '- q: Open late?\n  a: Until nine.\n\n- q: Open on Sunday?\n- q: Parking?\n  a: Yes.\n'));
    expect(missing.line).toBe(4);
    expect(missing.message).toBe('help/faq.yaml line 4: the entry has no answer (write "answer:" or "a:")');

    const noQuestion = await documentError(read('faq.yaml', 'faq:\n  - answer: Until nine.\n'));
    expect([noQuestion.line, noQuestion.message]).toEqual([2, 'faq.yaml line 2: the entry has no question (write "question:" or "q:")']);

    const number = await documentError(read('faq.yaml', '- q: How many seats?\n  a: 24\n'));
    expect([number.line, number.message]).toEqual([1, "faq.yaml line 1: the entry's answer is not text (put it in quotes)"]);

    const list = await documentError(read('faq.yaml', '- q: Open?\n  a: [Mon, Tue]\n'));
    expect([list.line, list.message]).toEqual([1, "faq.yaml line 1: the entry's answer is not text"]);
  });

  it('says what shape an FAQ has when the file is something else', async () => {
    const error = await documentError(read('faq.yaml', 'title: Our FAQ\n'));
    expect(error.line).toBe(1);
    expect(error.message).toContain('no list of questions: an FAQ is a list of entries with "question" and "answer"');
    expect((await documentError(read('faq.yaml', '- Just a line\n'))).message).toContain('line 1: an entry is not a question with its answer');
  });
});

describe('HTML', () => {
  const page = [
    '<!DOCTYPE html>', // 1
    '<html>', // 2
    '<head><title>Corner Shop</title>', // 3
    '<style>p { color: red }</style></head>', // 4
    '<body>', // 5
    '<header><h1>Site name</h1><p>Tagline</p></header>', // 6
    '<nav><ul><li>Home</li><li>About</li></ul></nav>', // 7
    '<p>Welcome to the <b>corner</b>&nbsp;shop.</p>', // 8
    '<h2>Opening hours</h2>', // 9
    '<p>', // 10
    '  Monday to Friday,', // 11
    '  nine to five.', // 12
    '</p>', // 13
    "<script>document.write('<p>not shown</p>')</script>", // 14
    '<table>', // 15
    '  <tr><th>Day</th><th>Hours</th></tr>', // 16
    '  <tr><td>Saturday</td><td>10&ndash;2</td></tr>', // 17
    '</table>', // 18
    '<h3>Holidays</h3>', // 19
    '<ul><li>Closed on <a href="/holidays">public holidays</a>.</li>', // 20
    '<li>Open late in <em>December</em>', // 21
    '<ul><li>until eight</li></ul></li></ul>', // 22
    '<noscript><p>Turn on JavaScript</p></noscript><template><p>Hidden</p></template>', // 23
    '<h2>Contact</h2>', // 24
    '<footer><p>© 2024 Corner Shop</p></footer>', // 25
    '</body></html>', // 26
  ].join('\n');

  it('reads headings and blocks, not the menu, header, footer or scripts; the title is the outermost heading without an h1', async () => {
    expect(await readFile('about.html', page)).toEqual([
      { heading: 'Corner Shop', line: 8, text: 'Welcome to the corner shop.' },
      { heading: 'Corner Shop › Opening hours', line: 9, text: 'Monday to Friday, nine to five.\nDay | Hours\nSaturday | 10–2' },
      { heading: 'Corner Shop › Opening hours › Holidays', line: 19, text: 'Closed on public holidays.\nOpen late in December\nuntil eight' },
    ]);
  });

  it('leaves the title out when the page has an h1, and gives each block the line of its start tag', async () => {
    const html = '<title>Shop</title>\n<h1>Prices</h1>\n<div>\n  <p\n    class="x">Tea\n  £2</p>\n  Loose words\n</div>\n<dl><dt>Coffee</dt>\n<dd>£3</dd></dl>';
    expect(await read('prices.htm', html)).toEqual([{ heading: 'Prices', line: 2, text: 'Tea £2\nLoose words\nCoffee\n£3' }]);
    const passages = await read('prices.htm', '<h1>Prices</h1>\n<p>Tea</p>\n\n<h2>Cakes</h2>\n\n\n<p>\nScones</p>');
    expect(passages.map((p) => [p.heading, p.line])).toEqual([
      ['Prices', 1],
      ['Prices › Cakes', 4],
    ]);
  });
});

/**
 * A PDF with one text line per entry of each page, in Helvetica (a font every
 * reader has), its cross-reference table at the offsets the objects are written at.
 */
function pdf(pages: readonly (readonly string[])[]): Uint8Array {
  const objects: string[] = ['<< /Type /Catalog /Pages 2 0 R >>', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'];
  const kids: number[] = [];
  for (const lines of pages) {
    const content = lines.map((line, n) => `BT /F1 10 Tf 72 ${740 - n * 14} Td (${line.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj ET`).join('\n');
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    const contentId = objects.length;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentId} 0 R >>`);
    kids.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((id) => `${id} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  let out = '%PDF-1.4\n';
  const offsets = objects.map((body, index) => {
    const offset = out.length;
    out += `${index + 1} 0 obj\n${body}\nendobj\n`;
    return offset;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  // Every character above is ASCII, so string offsets are byte offsets.
  return bytesOf(out);
}

describe('PDF', () => {
  /** Paragraph k of page 2: four full lines, then a short one ending the sentence. */
  const paragraph = (k: number): string[] => [
    ...Array.from({ length: 4 }, (_, n) => `Paragraph ${k} line ${n + 1} tells the caller about the shop, its opening hours and its prices, and`),
    `so it ends here ${k}.`,
  ];

  it('reads each page’s paragraphs with the page and the line on it', async () => {
    const bytes = pdf([
      ['Opening hours', 'We open at nine every weekday and close at five in the', 'evening.', 'Parking is free behind the shop.'],
      [...paragraph(1), ...paragraph(2), ...paragraph(3), ...paragraph(4)],
    ]);
    const passages = await readFile('guide.pdf', bytes);
    const words = (k: number): string => paragraph(k).join(' ');
    expect(passages).toEqual([
      {
        heading: '',
        line: 1,
        page: 1,
        text: 'Opening hours We open at nine every weekday and close at five in the evening.\nParking is free behind the shop.',
      },
      // Each paragraph is 378 characters: three would pass 1,000.
      { heading: '', line: 1, page: 2, text: `${words(1)}\n${words(2)}` },
      { heading: '', line: 11, page: 2, text: `${words(3)}\n${words(4)}` },
    ]);
    expect(words(1)).toHaveLength(378);
  });

  it('leaves the caller’s bytes as they were (PDF.js would take the buffer)', async () => {
    const bytes = pdf([['Hello.']]);
    const copy = bytes.slice();
    expect(await readPassages('a.pdf', bytes)).toEqual([{ heading: '', line: 1, page: 1, text: 'Hello.' }]);
    expect(bytes).toEqual(copy);
  });

  it('says a file that is no PDF is not a readable PDF', async () => {
    const error = await documentError(read('menu.pdf', 'This is a text file renamed.'));
    expect(error.message).toMatch(/^menu\.pdf: not a readable PDF: /);
    expect((await documentError(readPassages('empty.pdf', new Uint8Array(0)))).message).toMatch(/^empty\.pdf: not a readable PDF: /);
  });
});

describe('bytes', () => {
  it('strips a byte order mark', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...bytesOf('# Title\nWords.')]);
    expect(await readPassages('a.md', bytes)).toEqual([{ heading: 'Title', line: 1, text: 'Words.' }]);
  });

  it('refuses bytes that are not UTF-8 with the first bad line', async () => {
    const latin1 = new Uint8Array([...bytesOf('# Menu\nTea\n'), 0x63, 0x61, 0x66, 0xe9, 0x0a, 0xff, 0x0a]);
    const error = await documentError(readFile('menu.md', latin1));
    expect([error.line, error.message]).toEqual([3, 'menu.md line 3: not UTF-8 text: save the file as UTF-8']);
    // A character cut short by the end of its line is that line's fault.
    const cut = await documentError(readPassages('faq.yaml', new Uint8Array([0x61, 0x0a, 0xc3, 0x0a, 0x62])));
    expect(cut.line).toBe(2);
    const utf16 = await documentError(readPassages('notes.txt', new Uint8Array([0xff, 0xfe, 0x61, 0x00])));
    expect(utf16.line).toBe(1);
  });

  it('refuses a file larger than its kind may be, saying both sizes', async () => {
    const text = await documentError(readPassages('big.md', new Uint8Array(5 * MB + 1)));
    expect(text.message).toBe('big.md: 5.1 MB is larger than the 5 MB a document of its kind may be');
    const pdfError = await documentError(readPassages('big.pdf', new Uint8Array(20 * MB + 1)));
    expect(pdfError.message).toBe('big.pdf: 20.1 MB is larger than the 20 MB a document of its kind may be');
    // A PDF may be larger than a text document: this one fails as a PDF, not for its size.
    expect((await documentError(readPassages('six.pdf', new Uint8Array(6 * MB).fill(0x20)))).message).toMatch(/^six\.pdf: not a readable PDF/);
  });
});

describe('any text', () => {
  const pieces = ['#', '## ', ' ', '\n', '\n\n', '-', '* ', '`', '|', '---', 'word', 'end.', '<p>', '</p>', '<h2>', '<li>', '<script>', ':', '"', '> ', '\t', 'é', '\u00a0', 'q: ', 'a: ', '- '];
  const text = fc.array(fc.constantFrom(...pieces), { maxLength: 80 }).map((parts) => parts.join(''));

  it('gives trimmed, collapsed passages with lines, or a DocumentError, never anything else', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('a.md', 'a.txt', 'a.yaml', 'a.html'), text, async (file, source) => {
        const passages = await read(file, source).catch((error: unknown) => {
          expect(error).toBeInstanceOf(DocumentError);
          return [];
        });
        for (const passage of passages) {
          expect(Number.isInteger(passage.line) && passage.line >= 1 && passage.line <= source.split('\n').length).toBe(true);
          for (const line of passage.text.split('\n')) expect(line).toMatch(/^\S+(?: \S+)*$/);
          if (!file.endsWith('.yaml')) expect(passage.text.length).toBeLessThanOrEqual(1000);
        }
      }),
      { numRuns: 300 },
    );
  });
});
