/**
 * Every relative link of the README and the docs leads somewhere: the file exists, and an anchor
 * names a heading of that file as GitHub makes its id. The README is the way in and docs/ is where it
 * sends people; a link that leads nowhere is a reader lost.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import { describe, expect, test } from 'vitest';
import { repoRoot } from './helpers/child-process.js';

const markdown = new MarkdownIt({ html: true });

interface Parsed {
  /** Link targets as written, with the line they are on. */
  readonly links: { target: string; line: number }[];
  /** The ids GitHub gives the headings (and any `<a id>` / `<a name>`). */
  readonly anchors: Set<string>;
}

function parse(text: string): Parsed {
  const tokens = markdown.parse(text, {});
  const slugger = new GithubSlugger();
  const links: Parsed['links'] = [];
  const anchors = new Set<string>();
  // An inline token inside a table has no lines of its own: the nearest block's stand in.
  let line = 1;
  tokens.forEach((token, i) => {
    if (token.map) line = token.map[0] + 1;
    if (token.type === 'heading_open') {
      const inline = tokens[i + 1];
      // GitHub's id is of the heading's text as read: code spans and links by their text alone.
      const words = (inline?.children ?? []).filter((c) => c.type === 'text' || c.type === 'code_inline').map((c) => c.content).join('');
      anchors.add(slugger.slug(words));
    }
    for (const child of token.children ?? []) {
      if (child.type === 'link_open') links.push({ target: String(child.attrGet('href') ?? ''), line });
      if (child.type === 'image') links.push({ target: String(child.attrGet('src') ?? ''), line });
      if (child.type === 'html_inline') for (const m of child.content.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    }
    if (token.type === 'html_block') for (const m of token.content.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  });
  return { links, anchors };
}

/** The README, and every Markdown file under docs/. */
async function documents(): Promise<string[]> {
  const docs = await readdir(path.join(repoRoot, 'docs'), { recursive: true });
  return ['README.md', 'CHANGELOG.md', ...docs.filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))];
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** What is wrong with each relative link of `files` (paths from the repository's root). */
async function brokenLinks(root: string, files: readonly string[]): Promise<string[]> {
  const parsed = new Map<string, Parsed>();
  const read = async (file: string) => {
    let p = parsed.get(file);
    if (!p) parsed.set(file, (p = parse(await readFile(path.join(root, file), 'utf8'))));
    return p;
  };
  const problems: string[] = [];
  for (const file of files) {
    for (const { target, line } of (await read(file)).links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: … are not ours to follow
      const [pathPart = '', anchor] = target.split('#');
      const to = pathPart === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(pathPart)));
      const where = `${file}:${line} → ${target}`;
      if (to.startsWith('..')) {
        problems.push(`${where}: leads out of the repository`);
        continue;
      }
      if (!(await exists(path.join(root, to)))) {
        problems.push(`${where}: ${to} does not exist`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!to.endsWith('.md')) {
        // A line of a source file (#L12) is GitHub's; any other anchor into a non-Markdown file is not checkable.
        if (!/^L\d+(-L\d+)?$/.test(anchor)) problems.push(`${where}: an anchor into a file that is not Markdown`);
        continue;
      }
      if (!(await read(to)).anchors.has(anchor)) problems.push(`${where}: ${to} has no heading with the id "${anchor}"`);
    }
  }
  return problems;
}

describe('links of the README and the docs', () => {
  test('every relative link leads to a file that exists, and every anchor to a heading of it', async () => {
    const files = [];
    for (const file of await documents()) if (await exists(path.join(repoRoot, file))) files.push(file);
    expect(files).toContain('README.md');
    expect(await brokenLinks(repoRoot, files)).toEqual([]);
  });

  test('a missing file, a missing heading and a link out of the repository are each found', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'hotline-links-'));
    try {
      await mkdir(path.join(root, 'docs'));
      await writeFile(
        path.join(root, 'README.md'),
        '# Top\n\n## The `store` and replicas\n\n[ok](docs/a.md#a-heading) [self](#the-store-and-replicas) [gone](docs/b.md) ' +
          '[no heading](docs/a.md#nothing) [out](../x.md) [web](https://example.com/#x)\n\n```\n[in code](docs/none.md)\n```\n',
      );
      await writeFile(path.join(root, 'docs', 'a.md'), '# A heading\n\n[back](../README.md#top)\n');
      const problems = await brokenLinks(root, ['README.md', 'docs/a.md']);
      expect(problems).toEqual([
        'README.md:5 → docs/b.md: docs/b.md does not exist',
        'README.md:5 → docs/a.md#nothing: docs/a.md has no heading with the id "nothing"',
        'README.md:5 → ../x.md: leads out of the repository',
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
