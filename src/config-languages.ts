/**
 * A language per call (docs/languages.md): whether calls use the prompts' language folders and
 * switch with the caller, and whether the recogniser is told the call's languages and vocabulary. A
 * group of config.ts's environment schema, kept with the part of `Config` it fills.
 */
import { z } from 'zod';
import { boolean } from './config-values.js';
import { variableDocs } from './config-sections.js';

export const LanguagesEnv = z.object({
  LANGUAGES: boolean('LANGUAGES', true).register(variableDocs, {
    section: 'languages',
    doc: `A language per call: a call starts in the language its request or the number called names (prompts/languages.yaml),
      and switches when the caller clearly speaks another language the prompts have a folder for (prompts/de/, prompts/tr/ …):
      that folder's prompts and voice answer from the next reply on. false: every call in the prompts folder's own files.`,
  }),
  CONFIGURE_TRANSCRIPTION: boolean('CONFIGURE_TRANSCRIPTION', true).register(variableDocs, {
    section: 'languages',
    doc: `Send configure_transcription (a production-service action) as each call starts and when the caller switches language:
      the call's languages, and the terms of prompts/vocabulary.txt. Sent only when the prompts have languages or a vocabulary;
      false for a voice service that knows only the spec's actions.`,
  }),
});

export interface LanguagesConfig {
  languages: { perCall: boolean; configureTranscription: boolean };
}

export function languagesConfigOf(e: z.output<typeof LanguagesEnv>): LanguagesConfig {
  return { languages: { perCall: e.LANGUAGES, configureTranscription: e.CONFIGURE_TRANSCRIPTION } };
}
