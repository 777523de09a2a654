import { createScrubber } from '../logger.js';

/**
 * Values shorter than this are not taken out of tool answers: a 3-character
 * environment value (a region code, an API version) must not blank that word
 * wherever an answer says it, and no secret worth the name is that short.
 */
export const MIN_SCRUBBED_CHARS = 8;

/**
 * Takes a tool's secrets out of what it returns, before the model, the
 * transcript, the store or the caller see it: the values of the `${ENV}`
 * references the tool (or its MCP server) uses and Hotline's own secrets,
 * as they are, URL- and JSON-encoded, and base64-encoded in a credential.
 * The mechanism is the logs' (createScrubber), so a form it learns to find
 * is found in both.
 */
export interface ToolScrubber {
  (text: string): string;
  /**
   * How far past a cut the text must be scrubbed first: a secret cut in half
   * by the cap would no longer be found. Longer than any form of any secret.
   */
  readonly margin: number;
}

export function toolScrubber(values: readonly (string | undefined)[]): ToolScrubber {
  const secrets = [...new Set(values.filter((v): v is string => v !== undefined && v.length >= MIN_SCRUBBED_CHARS))];
  const scrub = createScrubber(secrets, { minLength: MIN_SCRUBBED_CHARS });
  // JSON-escaping makes a character at most six (\u0000); every other form is shorter.
  const longest = secrets.reduce((max, secret) => Math.max(max, secret.length), 0);
  return Object.assign((text: string) => scrub(text), { margin: longest * 6 + 16 });
}

/**
 * `text` scrubbed, for a result capped at `maxChars`: a long text is scrubbed
 * only as far as the cap needs, without the last `margin` characters, where a
 * secret may have been cut in half. `cut`: the text given is already a
 * prefix of a longer one. `more` says the text went on.
 */
export function scrubForCap(text: string, scrub: ToolScrubber, maxChars: number, cut = false): { text: string; more: boolean } {
  if (!cut && text.length <= maxChars + scrub.margin) return { text: scrub(text), more: false };
  const scrubbed = scrub(text.slice(0, maxChars + 2 * scrub.margin));
  return { text: scrubbed.slice(0, Math.max(0, scrubbed.length - scrub.margin)), more: true };
}

/** How much of a text `scrubForCap` needs for a cap of `maxChars`. */
export function scrubbedLength(scrub: ToolScrubber, maxChars: number): number {
  return maxChars + 2 * scrub.margin;
}
