/**
 * The scripted server's prompt cache: what a provider that caches prompt
 * prefixes by itself (OpenAI) would report as cached for a request. A prompt
 * is read as the provider reads it — tools first, then the messages — and its
 * cached tokens are the longest prefix identical to one of an earlier request
 * (bytes / 4 as tokens), in OpenAI's steps: nothing below 1,024 tokens, then
 * whole steps of 128. Cache marks are hints, not prompt text: left out.
 */
import { createHash } from 'node:crypto';

const BYTES_PER_TOKEN = 4;
const FIRST_STEP_BYTES = 1024 * BYTES_PER_TOKEN;
const STEP_BYTES = 128 * BYTES_PER_TOKEN;
/** Prefixes remembered, the least recently seen forgotten first: a demo model that runs for months must not grow. */
const MAX_PREFIXES = 4096;

export interface PromptCount {
  readonly promptTokens: number;
  readonly cachedTokens: number;
}

export class ScriptedPromptCache {
  /** Hashes of the prefixes seen, at every step; a Map for its order, oldest first. */
  private readonly seen = new Map<string, true>();

  /** Counts the prompt of a request (its JSON as sent, parsed) and remembers its prefixes for the requests after it. */
  count(raw: unknown): PromptCount {
    const bytes = Buffer.from(promptText(raw));
    const hash = createHash('sha256');
    let hashed = 0;
    let cached = 0;
    for (let end = FIRST_STEP_BYTES; end <= bytes.length; end += STEP_BYTES) {
      hash.update(bytes.subarray(hashed, end));
      hashed = end;
      const prefix = hash.copy().digest('base64');
      if (this.seen.delete(prefix)) cached = end;
      this.seen.set(prefix, true);
    }
    for (const oldest of this.seen.keys()) {
      if (this.seen.size <= MAX_PREFIXES) break;
      this.seen.delete(oldest);
    }
    return { promptTokens: Math.ceil(bytes.length / BYTES_PER_TOKEN), cachedTokens: cached / BYTES_PER_TOKEN };
  }
}

/** The prompt in the order providers read it: the model's, the tools, the messages. */
function promptText(raw: unknown): string {
  const body = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  return JSON.stringify([body['model'], body['tools'] ?? null, body['messages']], (key, value: unknown) =>
    key === 'cache_control' ? undefined : value,
  );
}
