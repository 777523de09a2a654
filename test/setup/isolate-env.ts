/**
 * Runs before every test file: removes from this process's environment every variable Hotline
 * or its tools read, so the shell people start `npm test` from (where the README tells them to
 * export OPENAI_API_KEY, WS_TOKEN, …) cannot change what the tests see, nor make them call a
 * real API. Child processes get an environment of their own anyway (test/helpers/child-process.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll } from 'vitest';
import { removeIsolatedCwd } from '../helpers/child-process.js';

const root = path.resolve(import.meta.dirname, '../..');

function hotlineVariables(): Set<string> {
  const names = new Set(['BOT_URL']);
  // Every variable .env.example documents, set or commented out.
  for (const match of readFileSync(path.join(root, '.env.example'), 'utf8').matchAll(/^[ \t]*#?[ \t]*([A-Z][A-Z0-9_]*)=/gm)) {
    names.add(match[1]!);
  }
  // And every key of the schema (config.ts and its groups, config-*.ts): a new variable may not be documented yet.
  const schemaFiles = readdirSync(path.join(root, 'src')).filter((file) => /^config(-[a-z-]+)?\.ts$/.test(file));
  for (const file of schemaFiles) {
    for (const match of readFileSync(path.join(root, 'src', file), 'utf8').matchAll(/^ {2}([A-Z][A-Z0-9_]*): /gm)) names.add(match[1]!);
  }
  return names;
}

const names = hotlineVariables();
for (const name of Object.keys(process.env)) {
  // OpenTelemetry's SDK reads its OTEL_* variables itself, documented by Hotline or not.
  if (names.has(name) || name.startsWith('OPENAI_') || name.startsWith('OTEL_')) delete process.env[name];
}
// Vitest's own value; a NODE_ENV=production from the shell would make Hotline refuse the demo model.
process.env.NODE_ENV = 'test';

// The empty working directory of the child processes a test file started.
afterAll(removeIsolatedCwd);
