import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts a module of ours on a thread of its own, built (.js) or from source
 * (.ts, under tsx or vitest). A worker does not inherit this thread's loader
 * hooks, so from source a small bootstrap registers tsx there first.
 *
 * `sibling` is the module's base name beside `from` (an import.meta.url).
 */
export function spawnModule(from: string, sibling: string, workerData: unknown): Worker {
  const typescript = from.endsWith('.ts');
  const entry = new URL(`./${sibling}.${typescript ? 'ts' : 'js'}`, from);
  if (!typescript) return new Worker(fileURLToPath(entry), { workerData });
  const tsxApi = pathToFileURL(fileURLToPath(import.meta.resolve('tsx/esm/api'))).href;
  const bootstrap =
    `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })` +
    `.catch((error) => { setImmediate(() => { throw error; }); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
