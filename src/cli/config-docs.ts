/**
 * Writes the configuration reference, docs/configuration.md and .env.example, from the descriptions
 * beside the schema (src/config-*.ts); with --check, only says whether the checked-in files are current.
 *
 *   npm run config:docs [-- --check]      (--help for the usage)
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { command, commandLineOrExit } from '../command-line.js';
import { configReference } from '../config-reference.js';
import { isMain } from './is-main.js';
import { renderEnvExample, renderMarkdown } from './config-render.js';

const USAGE = `Usage: npm run config:docs -- [--check]

Writes docs/configuration.md (the reference a person reads: every environment variable by section,
with its default and what it does) and .env.example (the same, as a file to copy to .env), both from
the descriptions beside the configuration schema in src/config-*.ts. Edit a description there, then
run this; never edit the two files by hand.
  --check    write nothing; exit 1 naming each file that differs from what would be written
             (default: write both files)

Example:
  npm run config:docs -- --check`;

const CONFIG_DOCS = command({ name: 'config:docs', usage: USAGE, allowPositionals: false, options: { check: { type: 'boolean' } } });

const root = path.resolve(import.meta.dirname, '..', '..');

/** Each generated file, by its path from the repository's root, with the text it should hold. */
export function generatedFiles(): { file: string; text: string }[] {
  const entries = configReference();
  return [
    { file: 'docs/configuration.md', text: renderMarkdown(entries) },
    { file: '.env.example', text: renderEnvExample(entries) },
  ];
}

/** The generated files whose checked-in text differs (a missing file differs). */
export async function staleFiles(): Promise<string[]> {
  const stale: string[] = [];
  for (const { file, text } of generatedFiles()) {
    const current = await readFile(path.join(root, file), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (current !== text) stale.push(file);
  }
  return stale;
}

async function main(check: boolean): Promise<number> {
  if (check) {
    const stale = await staleFiles();
    for (const file of stale) process.stderr.write(`${file} is stale: run npm run config:docs and commit it\n`);
    return stale.length > 0 ? 1 : 0;
  }
  for (const { file, text } of generatedFiles()) {
    await writeFile(path.join(root, file), text);
    process.stdout.write(`wrote ${file}\n`);
  }
  return 0;
}

if (isMain(import.meta.url)) {
  const check = commandLineOrExit(CONFIG_DOCS, process.argv.slice(2), ({ values }) => values.check === true);
  main(check).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`config:docs failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
