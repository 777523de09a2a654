import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';

/** Everything Hotline says or tells the model that a person may want to edit. */
export interface Prompts {
  /** The system prompt. */
  system: string;
  /** Spoken at once when a call starts, without an LLM round trip. */
  greeting: string;
  /** The apology when the LLM fails; the call goes on after it. */
  error: string;
  /** Said when a call comes back after a transfer nobody answered. */
  transferFailed: string;
}

const FILES: Record<keyof Prompts, string> = {
  system: 'system.md',
  greeting: 'greeting.md',
  error: 'error.md',
  transferFailed: 'transfer-failed.md',
};

// Used only when a file is missing, so a half-configured folder still gives a working agent.
const FALLBACKS: Prompts = {
  system: 'You are a friendly, concise phone assistant. Answer in short spoken sentences without markdown.',
  greeting: 'Hello, how can I help you?',
  error: "I'm sorry, I'm having a little trouble right now. Could you say that again?",
  transferFailed: "I'm sorry, nobody is available right now. Can I help you with anything else?",
};

/** Loads the prompt files from `dir`. Kept in one module so templating and hot reload can grow here. */
export async function loadPrompts(dir: string, logger: Logger): Promise<Prompts> {
  const entries = await Promise.all(
    (Object.keys(FILES) as (keyof Prompts)[]).map(async (key) => {
      const file = path.join(dir, FILES[key]);
      try {
        const text = (await readFile(file, 'utf8')).trim();
        if (text !== '') return [key, text] as const;
        logger.warn({ file }, 'prompt file is empty, using the built-in default');
      } catch (error) {
        logger.warn({ file, err: error }, 'prompt file missing or unreadable, using the built-in default');
      }
      return [key, FALLBACKS[key]] as const;
    }),
  );
  return Object.fromEntries(entries) as unknown as Prompts;
}
