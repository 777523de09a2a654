/**
 * The language of one call: chosen as it starts — the request that placed it (a campaign contact's
 * `language`), else the line the caller dialled (languages.yaml `lines`), else the prompts' own —
 * and switched when the caller clearly speaks another language the prompts have. Each choice puts
 * that language's prompts (and so its voice) into use from the next line on, and tells the
 * recogniser with configure_transcription before anything else is said.
 */
import { baseLanguage, normaliseTag, transcriptionTag } from '../language/language-tag.js';
import type { Logger } from '../logger.js';
import type { PromptSet } from '../prompts/prompt-store.js';
import type { Action } from '../protocol/actions.js';
import type { CallPrompts } from './call-prompts.js';
import type { CallRecord } from './call-record.js';
import type { LanguageDetector } from './ports/language.js';
import type { CallTrace } from './ports/tracing.js';
import type { TranscriptLog } from './ports/transcript.js';

/** The voice service's recogniser takes at most this many languages at once. */
const MAX_TRANSCRIPTION_LANGUAGES = 4;

/** How a call came to be in its language. */
export type LanguageChoice = 'request' | 'line' | 'default' | 'detected' | 'service';

export interface CallLanguageHost {
  readonly sessionId: string;
  readonly log: Logger;
  readonly prompts: CallPrompts;
  readonly record: CallRecord;
  readonly transcript: TranscriptLog;
  readonly trace: CallTrace;
  /** Undefined: callers are never switched by their words (only by the service's tag). */
  readonly detector: LanguageDetector | undefined;
  /** false: the call stays in the prompts folder's own files (LANGUAGES=false). */
  readonly perCall: boolean;
  /** false: the recogniser is never told (CONFIGURE_TRANSCRIPTION=false). */
  readonly configure: boolean;
  send(action: Action): void;
}

export class CallLanguage {
  /** The language the recogniser last said it heard, when the service tags its transcripts. */
  private serviceTag: string | undefined;

  constructor(private readonly host: CallLanguageHost) {}

  /** The language in use; undefined when the prompts have none. */
  get current(): string | undefined {
    return this.host.prompts.language;
  }

  /**
   * The call begins: its language from the request, the number dialled or the default, put into use
   * before the greeting is rendered, and the recogniser configured for it.
   */
  begin(inbound: boolean, calledNumber: string | undefined, requested: string | undefined): void {
    const { prompts } = this.host;
    if (!this.host.perCall) return this.configure();
    const languages = prompts.languages;
    let choice: LanguageChoice = 'default';
    let set: PromptSet | undefined;
    if (requested !== undefined) {
      const tag = normaliseTag(requested);
      set = tag === undefined ? undefined : languages.of(tag);
      if (set) choice = 'request';
      else this.host.log.warn({ language: requested }, 'the request asks for a language the prompts do not have; the call starts in the default one');
    }
    if (!set && inbound && calledNumber !== undefined) {
      const tag = languages.routing.lines.get(calledNumber.replace(/[^0-9]/g, ''));
      set = tag === undefined ? undefined : languages.of(tag);
      if (set) choice = 'line';
    }
    if (set) prompts.use(set);
    this.configure();
    if (prompts.language === undefined) return;
    this.settled(choice, undefined);
  }

  /** An adopted call goes on in the language its record says, without telling the recogniser again. */
  restore(language: string | undefined): void {
    if (language === undefined || !this.host.perCall) return;
    const set = this.host.prompts.languages.of(language);
    if (set) this.host.prompts.use(set);
    if (this.host.prompts.language !== undefined) this.host.record.language(this.host.prompts.language);
  }

  /** The recogniser tagged the caller's words with their language (not every service does). */
  tagged(language: string | undefined): void {
    this.serviceTag = language;
  }

  /**
   * The caller's words, before they are answered: in another language the prompts have, the answer
   * is in that language — its prompts, its voice — and the recogniser listens for it first.
   */
  heard(text: string): void {
    const { prompts, detector } = this.host;
    const current = prompts.language;
    const { tags, routing } = prompts.languages;
    if (current === undefined || tags.length < 2 || !this.host.perCall) return;
    const tagged = this.serviceTag;
    this.serviceTag = undefined;
    let next: PromptSet | undefined;
    let confidence: number | undefined;
    let choice: LanguageChoice = 'detected';
    if (tagged !== undefined) {
      const tag = normaliseTag(tagged);
      if (tag !== undefined && baseLanguage(tag) !== baseLanguage(current)) next = prompts.languages.of(tag);
      choice = 'service';
    } else if (detector && routing.detect) {
      const candidates = [...new Set(tags.map(baseLanguage))];
      const found = detector.detect(text, candidates);
      if (found && found.language !== baseLanguage(current) && found.confidence >= (routing.minConfidence ?? detector.minConfidence)) {
        next = prompts.languages.of(found.language);
        confidence = found.confidence;
      }
    }
    if (!next || next === prompts.current) return;
    const from = current;
    prompts.use(next);
    this.configure();
    this.settled(choice, from, confidence);
  }

  /**
   * configure_transcription: the call's language first, then the others the caller may switch to,
   * and the vocabulary of the call's language. Nothing is sent when there is nothing to tell.
   */
  private configure(): void {
    const { prompts } = this.host;
    if (!this.host.configure) return;
    // Without languages per call the recogniser is told only the vocabulary: the folder's language is not the call's choice.
    const current = this.host.perCall ? prompts.language : undefined;
    const { tags, routing } = prompts.languages;
    const vocabulary = prompts.current.vocabulary;
    if (current === undefined && vocabulary.length === 0) return;
    const tagOf = (tag: string): string => routing.transcription.get(tag) ?? routing.transcription.get(baseLanguage(tag)) ?? transcriptionTag(tag);
    const others = routing.detect ? tags.filter((t) => t !== current) : [];
    const languages = current === undefined ? [] : [...new Set([current, ...others].map(tagOf))].slice(0, MAX_TRANSCRIPTION_LANGUAGES);
    this.host.send({
      type: 'configure_transcription',
      session_id: this.host.sessionId,
      ...(languages.length > 0 ? { languages } : {}),
      ...(vocabulary.length > 0 ? { custom_vocabulary: [...vocabulary] } : {}),
    });
  }

  private settled(choice: LanguageChoice, from: string | undefined, confidence?: number): void {
    const language = this.host.prompts.language!;
    this.host.record.language(language);
    this.host.trace.language(language, choice);
    this.host.transcript.append({
      role: 'event',
      text: 'language',
      language,
      chosen_by: choice,
      ...(from !== undefined ? { from } : {}),
      ...(confidence !== undefined ? { confidence: Math.round(confidence * 100) / 100 } : {}),
    });
    if (from !== undefined) this.host.log.info({ language, from, chosenBy: choice }, 'the caller speaks another language: answering in it');
  }
}
