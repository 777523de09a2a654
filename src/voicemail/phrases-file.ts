import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { describe, errorCode, type PromptProblem } from '../prompts/folder-load.js';
import { describeYamlProblem, parseYamlFile } from '../yaml-file.js';
import { compilePhrases } from './classify.js';
import { normalizeSpeech, type ExtraPhrases } from './phrases.js';

/**
 * `<PROMPTS_DIR>/voicemail.yaml`: phrases added to the built-in ones. Reading
 * and checking only; keeping it current is the store's business.
 *
 *   voicemail: [phrases that mean a mailbox, anywhere in the first words]
 *   human: [phrases that mean a person, in a short first utterance]
 */

export const VOICEMAIL_FILE = 'voicemail.yaml';

const PhraseSchema = z
  .string({ error: 'a phrase must be text' })
  .trim()
  .refine((phrase) => normalizeSpeech(phrase) !== '', { error: 'a phrase needs letters or digits: punctuation is ignored' });
// An empty list (`human:` with nothing under it) is no list.
const PhraseListSchema = z
  .array(PhraseSchema, { error: 'a list of phrases, one per line starting with "- "' })
  .nullish()
  .transform((list) => list ?? []);

export const VoicemailFileSchema = z.strictObject({ voicemail: PhraseListSchema, human: PhraseListSchema });
export type VoicemailFile = z.output<typeof VoicemailFileSchema>;

export type VoicemailFileRead = { readonly fingerprint: string } & (
  /** No voicemail.yaml: the built-ins alone, and nothing wrong. */
  | { readonly kind: 'absent' }
  /** No prompts folder at all: the prompt files' problem, reported with them. */
  | { readonly kind: 'folder_gone' }
  /** Cannot be read, or is not what it should be: every problem, with its line. */
  | { readonly kind: 'broken'; readonly problems: readonly PromptProblem[] }
  /** Usable; `problems` are warnings only. */
  | { readonly kind: 'loaded'; readonly phrases: ExtraPhrases; readonly problems: readonly PromptProblem[] }
);

export async function loadVoicemailPhrases(promptsDir: string): Promise<VoicemailFileRead> {
  let text: string;
  try {
    text = (await readFile(path.join(promptsDir, VOICEMAIL_FILE), 'utf8')).replace(/^\uFEFF/, '');
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') {
      const kind = (await isFolder(promptsDir)) ? 'absent' : 'folder_gone';
      return { kind, fingerprint: kind };
    }
    return broken(undefined, [`cannot be read: ${describe(error)}`]);
  }
  const parsed = parseYamlFile(text, VoicemailFileSchema);
  if ('problems' in parsed) return broken(text, parsed.problems.map(describeYamlProblem));
  const phrases: ExtraPhrases = Object.freeze({
    voicemail: Object.freeze(parsed.data.voicemail),
    human: Object.freeze(parsed.data.human),
  });
  // Parsed a second time only for its lines: a phrase that can never decide anything is worth a warning, not a refusal.
  const dead = parseYamlFile(text, VoicemailFileSchema.superRefine(humanPhrasesMailboxesWin));
  const problems = 'problems' in dead ? dead.problems.map((p) => problem(describeYamlProblem(p), 'warning')) : [];
  return { kind: 'loaded', phrases, problems, fingerprint: fingerprint(text, problems) };
}

export interface VoicemailFileCheck {
  readonly file: string;
  /** What the file adds, for prompts:check: `12 voicemail phrases, 3 human phrases`. */
  readonly summary: string;
  readonly problems: readonly PromptProblem[];
}

/** What prompts:check says about voicemail.yaml; undefined when there is none (the built-ins are the default). */
export async function checkVoicemailFile(promptsDir: string): Promise<VoicemailFileCheck | undefined> {
  const read = await loadVoicemailPhrases(promptsDir);
  switch (read.kind) {
    case 'absent':
    case 'folder_gone':
      return undefined;
    case 'broken':
      return { file: VOICEMAIL_FILE, summary: 'voicemail phrases (not loaded)', problems: read.problems };
    case 'loaded': {
      const { voicemail, human } = read.phrases;
      return { file: VOICEMAIL_FILE, summary: `${plural(voicemail.length, 'voicemail phrase')}, ${plural(human.length, 'human phrase')}`, problems: read.problems };
    }
  }
}

/** A human phrase holding a mailbox phrase never decides anything: the mailbox phrase is found first. */
function humanPhrasesMailboxesWin(file: VoicemailFile, ctx: z.RefinementCtx): void {
  const mailbox = compilePhrases({ voicemail: file.voicemail, human: [] }).voicemail;
  file.human.forEach((phrase, index) => {
    const padded = ` ${normalizeSpeech(phrase)} `;
    const found = mailbox.find((m) => padded.includes(` ${m} `));
    if (found === undefined) return;
    ctx.addIssue({
      code: 'custom',
      path: ['human', index],
      message: `"${phrase}" holds the mailbox phrase "${found}", which decides first: this human phrase is never used`,
    });
  });
}

function broken(text: string | undefined, messages: readonly string[]): VoicemailFileRead {
  const problems = messages.map((message) => problem(message, 'error'));
  return { kind: 'broken', problems, fingerprint: fingerprint(text, problems) };
}

function problem(message: string, severity: PromptProblem['severity']): PromptProblem {
  return { file: VOICEMAIL_FILE, severity, message };
}

/** Equal for equal texts and problems: tells an edit from the noise of editors' temporary files. */
function fingerprint(text: string | undefined, problems: readonly PromptProblem[]): string {
  return createHash('sha256')
    .update(JSON.stringify({ text: text ?? null, problems }))
    .digest('hex');
}

async function isFolder(dir: string): Promise<boolean> {
  return stat(dir).then(
    (stats) => stats.isDirectory(),
    () => false,
  );
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}
