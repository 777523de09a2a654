/**
 * Reads one YAML text on a thread of its own (see readYamlOffThread): the
 * `yaml` package takes tens of milliseconds for a few kilobytes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parse } from 'yaml';

const { text } = workerData as { text: string };
try {
  parentPort!.postMessage({ ok: true, value: parse(text) as unknown });
} catch (error) {
  parentPort!.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
}
