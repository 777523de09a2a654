/**
 * The two files the configuration reference (src/config-reference.ts) is written as: docs/configuration.md
 * for a person to read, and .env.example to copy. Both come from the same entries, so they cannot say
 * different things; `npm run config:docs` writes them and test/config-reference.test.ts checks them.
 */
import { SECTIONS, type SectionId } from '../config-sections.js';
import type { ReferenceEntry } from '../config-reference.js';

const GENERATOR = 'npm run config:docs';
const ENV_WIDTH = 100;

/** A section's anchor in docs/configuration.md, as GitHub makes it from the heading. */
export function anchorOf(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function bySection(entries: readonly ReferenceEntry[]): [SectionId, ReferenceEntry[]][] {
  return (Object.keys(SECTIONS) as SectionId[]).map((id): [SectionId, ReferenceEntry[]] => [id, entries.filter((e) => e.section === id)]).filter(([, list]) => list.length > 0);
}

/** What the variable does, then what unset means when the code works that out. */
function sentences(entry: ReferenceEntry): string {
  const unset = entry.unsetMeans === undefined ? '' : ` Unset: ${entry.unsetMeans}.`;
  return `${entry.doc}${unset}`;
}

// --- .env.example ---------------------------------------------------------------------------------

/** `text` as comment lines of at most ENV_WIDTH characters (a longer word gets a line of its own). */
function commentLines(text: string): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(' ')) {
    if (line.length > 1 && line.length + 1 + word.length > ENV_WIDTH) {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return lines;
}

function heading(title: string): string {
  const start = `# --- ${title} `;
  return start.padEnd(ENV_WIDTH, '-');
}

/** A variable with a default is set to it, so the file says it; one without is offered commented out. */
function envBlock(entry: ReferenceEntry): string[] {
  const assignment = entry.default !== undefined ? `${entry.name}=${entry.default}` : `# ${entry.name}=${entry.example ?? ''}`;
  return [...commentLines(sentences(entry)), assignment];
}

export function renderEnvExample(entries: readonly ReferenceEntry[]): string {
  const out = [
    ...commentLines(
      'Hotline configuration. Copy to .env (never commit it) or set these in the environment. With nothing set at all, ' +
        '`npm start` runs on the built-in scripted demo model. An empty value (`PORT=`) means "not set": the default ' +
        'applies. A bad value stops the start with one line that names the variable and what it expects.',
    ),
    ...commentLines(
      `Written by \`${GENERATOR}\` from the descriptions beside the schema (src/config-*.ts, src/config-elsewhere.ts): ` +
        'edit them there. docs/configuration.md says the same as a table.',
    ),
  ];
  for (const [id, list] of bySection(entries)) {
    out.push('', heading(SECTIONS[id].title), ...commentLines(SECTIONS[id].intro));
    for (const entry of list) out.push('', ...envBlock(entry));
  }
  return `${out.join('\n')}\n`;
}

// --- docs/configuration.md ------------------------------------------------------------------------

/** Variable names (`AIFLOW_*` too) and file names, shown as code; or a character Markdown would read as markup. */
const CODE_WORD_OR_MARKUP = /(\b[A-Z][A-Z0-9]*_[A-Z0-9_]*\*?|\b[\w.-]+(?:\/[\w.*-]+)*\.(?:md|yaml|ts|json|jsonl|db)\b)|[\\*_<>[\]]/g;

/**
 * Plain text as Markdown: variable and file names become code; elsewhere, what Markdown would read as
 * markup (`<session id>`, `/api/*`, `__Host-`) is escaped. A `|` is escaped everywhere, for table cells.
 */
function markdownText(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(CODE_WORD_OR_MARKUP, (match, word?: string) => (word ? `\`${word}\`` : `\\${match}`))))
    .join('')
    .replace(/\|/g, '\\|');
}

const code = (text: string): string => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);

function defaultCell(entry: ReferenceEntry): string {
  if (entry.default !== undefined) return entry.default === '' ? '(empty)' : code(entry.default).replace(/\|/g, '\\|');
  if (entry.unsetMeans !== undefined) return markdownText(entry.unsetMeans);
  return 'unset';
}

function whatCell(entry: ReferenceEntry): string {
  const parts = [markdownText(entry.doc)];
  if (entry.example !== undefined) parts.push(`Example: ${code(entry.example).replace(/\|/g, '\\|')}.`);
  if (entry.readBy !== undefined) parts.push(`Read by ${markdownText(entry.readBy)}.`);
  return parts.join(' ');
}

export function renderMarkdown(entries: readonly ReferenceEntry[]): string {
  const sections = bySection(entries);
  const out = [
    '# Configuration',
    '',
    'Hotline is configured by environment variables, set in the environment or in a `.env` file in its working',
    'directory ([`.env.example`](../.env.example) is one to copy, with every variable below). An empty value',
    '(`PORT=`) means "not set": the default applies. A bad value stops the start with one line that names the',
    'variable and what it expects.',
    '',
    `This page is written by \`${GENERATOR}\` from the descriptions beside the configuration schema`,
    '(`src/config-*.ts`, and `src/config-elsewhere.ts` for the variables read outside it), as `.env.example` is;',
    '`npm test` fails when either file differs from what it would write, or when the code reads a variable',
    'this page does not list.',
    '',
    ...sections.map(([id]) => `- [${SECTIONS[id].title}](#${anchorOf(SECTIONS[id].title)})`),
  ];
  for (const [id, list] of sections) {
    out.push('', `## ${SECTIONS[id].title}`, '', markdownText(SECTIONS[id].intro), '', '| Variable | Default | What it does |', '| --- | --- | --- |');
    for (const entry of list) out.push(`| \`${entry.name}\` | ${defaultCell(entry)} | ${whatCell(entry)} |`);
  }
  return `${out.join('\n')}\n`;
}
