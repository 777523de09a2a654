import { spawnModule } from '../worker-module.js';
import { InvalidCampaignError } from './errors.js';

/** Longer YAML takes seconds even off the event loop: contact lists go in as CSV. */
export const MAX_YAML_CHARS = 1024 * 1024;
const YAML_TIMEOUT_MS = 15_000;

/**
 * A campaign definition as someone pasted or uploaded it: JSON when it starts with `{`, else YAML.
 * JSON is read here (a few milliseconds a megabyte); YAML on a thread of its own, since the `yaml`
 * package needs tens of milliseconds for a few kilobytes and the calls share this event loop.
 * What cannot be read is an InvalidCampaignError saying where.
 */
export async function readDefinitionText(text: string): Promise<unknown> {
  const trimmed = text.trim();
  if (trimmed === '') throw new InvalidCampaignError([{ field: 'definition', message: 'empty; paste the campaign (YAML or JSON) or choose its file' }]);
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch (error) {
      throw new InvalidCampaignError([{ field: 'definition', message: `not valid JSON (${error instanceof Error ? error.message : String(error)})` }]);
    }
  }
  if (trimmed.length > MAX_YAML_CHARS) {
    throw new InvalidCampaignError([
      {
        field: 'definition',
        message: `${Math.ceil(trimmed.length / 1024)} KB of YAML, more than the ${MAX_YAML_CHARS / 1024} KB read here; give the contacts as CSV, or the definition as JSON`,
      },
    ]);
  }
  const answer = await offThread(trimmed);
  // The yaml package's first line says what and where ("… at line 1, column 9:"); the rest quotes the text.
  if (!answer.ok) throw new InvalidCampaignError([{ field: 'definition', message: `not valid YAML (${answer.message.split('\n')[0]!.replace(/:$/, '')})` }]);
  return answer.value;
}

type Answer = { ok: true; value: unknown } | { ok: false; message: string };

function offThread(text: string): Promise<Answer> {
  return new Promise((resolve) => {
    const worker = spawnModule(import.meta.url, 'yaml-worker', { text });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve({ ok: false, message: `not read within ${YAML_TIMEOUT_MS / 1000} s` });
    }, YAML_TIMEOUT_MS);
    timer.unref();
    const done = (answer: Answer): void => {
      clearTimeout(timer);
      resolve(answer);
    };
    worker.once('message', (answer: Answer) => done(answer));
    worker.once('error', (error) => done({ ok: false, message: error.message }));
    worker.once('exit', (code) => done({ ok: false, message: `the reader stopped (${code})` }));
  });
}
