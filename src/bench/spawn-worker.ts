import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts one of the bench's worker modules (given by its base name, next to
 * this file) on a thread. Under tsx the loader hooks of this thread do not
 * reach a worker, so a small bootstrap registers tsx there first.
 */
export function spawnWorker(name: string, workerData: unknown): Worker {
  const typescript = import.meta.url.endsWith('.ts');
  const entry = new URL(`./${name}.${typescript ? 'ts' : 'js'}`, import.meta.url);
  if (!typescript) return new Worker(fileURLToPath(entry), { workerData });
  const tsxApi = pathToFileURL(fileURLToPath(import.meta.resolve('tsx/esm/api'))).href;
  const bootstrap =
    `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })` +
    `.catch((error) => { setImmediate(() => { throw error; }); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
