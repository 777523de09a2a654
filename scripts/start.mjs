/**
 * `npm start`: brings dist/ up to date with src/ and runs dist/main.js in this same process.
 *
 * The JavaScript is made by esbuild, which only strips the types (all of src/ in about a second,
 * against 18 s for tsc); the types are checked by `npm test`, `npm run typecheck` and `npm run build`,
 * which is what the Docker image runs. Only what changed since the last start is compiled again:
 * dist/.start-manifest.json holds each source's modification time and size, a source that differs is
 * compiled, and a source that is gone has its output removed. With nothing changed, esbuild is not
 * even loaded.
 *
 * dist/ is shared with `npm run build` (tsc): a tsc build leaves its dist/.tsbuildinfo there, so the
 * next start sees it, empties dist/ and compiles all of src/ itself; and since that deletes the
 * .tsbuildinfo, the next tsc build compiles everything too. Neither trusts what the other wrote.
 *
 * This file is plain JavaScript so that it needs no compiling of its own; it is not part of the
 * product (nothing in src/ imports it, and the Docker image runs node dist/main.js without it).
 *
 * What it says goes where Hotline's log goes, in the same form: readable lines at a terminal outside
 * production, JSON lines (as pino writes them) anywhere else; nothing below LOG_LEVEL.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseDotenv } from 'dotenv';

const startedAt = performance.now();
const root = path.resolve(import.meta.dirname, '..');
const srcDir = path.join(root, 'src');
const outDir = path.join(root, 'dist');
const manifestFile = path.join(outDir, '.start-manifest.json');
/** Where `npm run build` (tsc --incremental) keeps what it built: see package.json. */
const tscBuildInfo = path.join(outDir, '.tsbuildinfo');
/** Changes when the way this file compiles changes: every output is then made again. */
const FORMAT = 1;
/** A wait longer than this is said while it lasts. */
const SAY_AFTER_MS = 1_000;

const env = { ...dotenvValues(), ...process.env };
const production = env.NODE_ENV === 'production';
const pretty = !production && process.stdout.isTTY === true;
const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
const threshold = LEVELS[(env.LOG_LEVEL ?? '').trim().toLowerCase()] ?? LEVELS.info;
// `npm start -- --help` (or a mistake main.js refuses): the usage alone, no compile lines before it.
const quiet = process.argv.length > 2;

/** What a .env file in the working directory sets, read as main.js will read it (dotenv; the environment wins). */
function dotenvValues() {
  try {
    return parseDotenv(readFileSync('.env', 'utf8'));
  } catch {
    return {};
  }
}

/** One line of the log: `[12:00:00.000] INFO: …` at a terminal, else a JSON line as pino writes it. */
function say(message, level = 'info') {
  if (quiet || LEVELS[level] < threshold) return;
  const now = new Date();
  if (pretty) {
    const time = [now.getHours(), now.getMinutes(), now.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
    const label = level === 'error' ? '\x1b[31mERROR\x1b[39m' : '\x1b[32mINFO\x1b[39m';
    process.stdout.write(`[${time}.${String(now.getMilliseconds()).padStart(3, '0')}] ${label}: \x1b[36m${message}\x1b[39m\n`);
  } else {
    process.stdout.write(`${JSON.stringify({ level: LEVELS[level], time: now.getTime(), service: 'hotline', component: 'start', msg: message })}\n`);
  }
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Every TypeScript source under src/, by its path there, with what says whether it changed. */
function sources() {
  const found = {};
  for (const entry of readdirSync(srcDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const { mtimeMs, size } = statSync(file);
    found[path.relative(srcDir, file).split(path.sep).join('/')] = [mtimeMs, size];
  }
  return found;
}

function readManifest() {
  try {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    return manifest.format === FORMAT && typeof manifest.files === 'object' ? manifest : undefined;
  } catch {
    return undefined;
  }
}

const outputsOf = (source) => {
  const js = path.join(outDir, source.replace(/\.ts$/, '.js'));
  return [js, `${js}.map`];
};

/** dist/ as src/ is now: returns what was done, for the one line that says it. */
async function bringUpToDate() {
  const now = sources();
  const manifest = readManifest();
  const builtByTsc = existsSync(tscBuildInfo);
  const whole = !manifest || builtByTsc || !existsSync(path.join(outDir, 'main.js'));
  const before = whole ? {} : manifest.files;
  const changed = Object.keys(now).filter((source) => {
    const was = before[source];
    return !was || was[0] !== now[source][0] || was[1] !== now[source][1] || !existsSync(outputsOf(source)[0]);
  });
  const removed = Object.keys(before).filter((source) => !(source in now));
  if (changed.length === 0 && removed.length === 0) return { whole, compiled: 0, removed: 0 };

  const why = builtByTsc
    ? 'dist/ was built by npm run build'
    : !manifest
      ? existsSync(outDir)
        ? 'dist/ has no record of the sources it was compiled from'
        : 'first start'
      : 'dist/main.js is missing';
  const what = whole ? `compiling src/ to dist/ (${why}) …` : `compiling ${changed.length} changed file${changed.length === 1 ? '' : 's'} of src/ to dist/ …`;
  // A whole compile is said at once; a few files only if they take longer than a second.
  if (whole) say(what);
  const slow = whole ? undefined : setTimeout(() => say(what), SAY_AFTER_MS);
  try {
    if (whole) rmSync(outDir, { recursive: true, force: true });
    for (const source of removed) for (const output of outputsOf(source)) rmSync(output, { force: true });
    if (changed.length > 0) {
      const { build } = await import('esbuild');
      await build({
        entryPoints: changed.map((source) => path.join(srcDir, source)),
        outdir: outDir,
        outbase: srcDir,
        bundle: false,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        // As tsc writes them (tsconfig.json's sourceMap): node --enable-source-maps names src/'s lines.
        sourcemap: 'linked',
        sourcesContent: false,
        logLevel: 'silent',
      });
    }
  } finally {
    clearTimeout(slow);
  }
  mkdirSync(outDir, { recursive: true });
  writeFileSync(`${manifestFile}.tmp`, JSON.stringify({ format: FORMAT, note: 'written by scripts/start.mjs (npm start): the sources dist/ was compiled from', files: now }));
  renameSync(`${manifestFile}.tmp`, manifestFile);
  return { whole, compiled: changed.length, removed: removed.length };
}

let done;
try {
  done = await bringUpToDate();
} catch (error) {
  // esbuild's errors name the file, line and column; a type error is not one of them (npm run typecheck).
  const errors = error?.errors?.length
    ? error.errors.map((e) => `${e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ` : ''}${e.text}`)
    : [String(error?.message ?? error)];
  process.stderr.write(`npm start could not compile src/ to dist/:\n  ${errors.join('\n  ')}\n`);
  process.exit(1);
}

const took = seconds(performance.now() - startedAt);
if (done.compiled > 0 || done.removed > 0) {
  const parts = [
    done.compiled > 0 && `compiled ${done.compiled} ${done.whole ? '' : 'changed '}file${done.compiled === 1 ? '' : 's'}`,
    done.removed > 0 && `removed the output of ${done.removed} deleted source${done.removed === 1 ? '' : 's'}`,
  ].filter(Boolean);
  say(`${parts.join(' and ')} in ${took}; starting dist/main.js`);
} else {
  say(`dist/ is up to date with src/ (checked in ${took}); starting dist/main.js`);
}

// Loading Hotline's modules and packages takes a second or more on a busy machine: said while it lasts.
// main.js emits 'hotline:loaded' once its modules are loaded and it begins to run.
const loading = setTimeout(() => say('still starting: loading the modules of dist/main.js and its packages …'), SAY_AFTER_MS);
loading.unref();
process.once('hotline:loaded', () => clearTimeout(loading));
await import(pathToFileURL(path.join(outDir, 'main.js')).href);
clearTimeout(loading);
