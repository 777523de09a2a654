import type { Logger } from '../logger.js';
import type { AudioClip } from './audio-clips.js';
import { baseLanguage } from '../language/language-tag.js';
import type { FolderLoad } from './folder-load.js';
import { NO_ROUTING, type LanguageRouting } from './language-settings.js';
import { joinVocabularies } from './vocabulary.js';
import { layerPronunciations, type Pronouncer } from './pronunciations.js';
import { PROMPT_FILES, type PromptName } from './prompt-files.js';
import { layerStyles, NO_STYLE, type SpeakStyle } from './speak-style.js';
import { staticHead, systemPrompt, type SystemPrompt } from './static-prefix.js';
import { DEFAULT_SETTINGS, type AudioName, type PromptSettings } from './system-settings.js';
import { compileTemplate, type Template, type TemplateVariables } from './template.js';

/** An immutable, fully loaded version of the prompts folder. */
export interface PromptSet {
  readonly settings: PromptSettings;
  /** Placeholders each file uses (for prompts:check and docs). */
  readonly placeholders: Record<PromptName, string[]>;
  /** Renders one prompt for one call; missing values render '' and are reported through onMissing. */
  render(name: PromptName, vars: Record<string, string | undefined>, onMissing?: (placeholder: string) => void): string;
  /** system.md rendered for one call, with the length of its part every call shares (what a provider can cache). */
  renderSystem(vars: Record<string, string | undefined>, onMissing?: (placeholder: string) => void): SystemPrompt;
  /** True if rendering `name` with `vars` would leave a placeholder without value or default. */
  wouldLeaveEmpty(name: PromptName, vars: Record<string, string | undefined>): boolean;
  /**
   * How a prompt file's line is spoken: the global style, then the built-in
   * default for that line, then the file's own front matter (each of
   * tts/barge_in/vad replaced whole).
   */
  style(name: PromptName): SpeakStyle;
  /** A clip named in system.md's `audio`, loaded and checked; undefined when not configured. */
  audio(name: AudioName): AudioClip | undefined;
  /** The language of these prompts (`de`, `de-AT`); undefined when the prompts have no languages. */
  readonly language: string | undefined;
  /** The terms the recogniser is told to expect in calls that use these prompts (vocabulary.txt). */
  readonly vocabulary: readonly string[];
  /** How the business's names are said (pronunciations.yaml, a language folder's over the default's). */
  readonly pronouncer: Pronouncer;
  /** Every language of this version of the folder, shared by all of its sets. */
  readonly languages: PromptLanguages;
}

/** The languages of one version of the prompts folder: the folder's own, and one per language folder. */
export interface PromptLanguages {
  /** Every language, the default first; empty when the prompts have no languages (no languages.yaml, no language folder). */
  readonly tags: readonly string[];
  readonly routing: LanguageRouting;
  /** The prompts of a language, by its tag or its base language (`de` finds `de-AT`); undefined when there is none. */
  of(tag: string): PromptSet | undefined;
}

const FALLBACK_TEMPLATES = new Map(
  PROMPT_FILES.flatMap((spec) => (spec.fallback === undefined ? [] : [[spec.name, compileTemplate(spec.fallback)] as const])),
);

interface PromptLine {
  readonly template: Template;
  readonly placeholders: string[];
  readonly style: SpeakStyle;
}

class LoadedPromptSet implements PromptSet {
  readonly placeholders: Record<PromptName, string[]>;
  /** system.md's text before its first placeholder's line, found once per version: every call's system prompt starts with it. */
  private readonly systemHead: string;

  constructor(
    private readonly lines: Readonly<Record<PromptName, PromptLine>>,
    private readonly clips: Readonly<Partial<Record<AudioName, AudioClip>>>,
    readonly settings: PromptSettings,
    private readonly logger: Logger,
    readonly language: string | undefined,
    readonly vocabulary: readonly string[],
    readonly pronouncer: Pronouncer,
    readonly languages: PromptLanguages,
  ) {
    const placeholders = {} as Record<PromptName, string[]>;
    for (const spec of PROMPT_FILES) placeholders[spec.name] = lines[spec.name].placeholders;
    this.placeholders = Object.freeze(placeholders);
    this.systemHead = staticHead(lines.system.template);
    Object.freeze(this);
  }

  render(name: PromptName, vars: TemplateVariables, onMissing?: (placeholder: string) => void): string {
    const report =
      onMissing ??
      ((placeholder: string) => this.logger.warn({ prompt: name, placeholder }, 'prompt placeholder has no value; rendered empty'));
    // Trimmed so the file's last newline, or a final placeholder left empty, is not spoken.
    return this.lines[name].template.render(vars, report).trim();
  }

  renderSystem(vars: TemplateVariables, onMissing?: (placeholder: string) => void): SystemPrompt {
    return systemPrompt(this.render('system', vars, onMissing), this.systemHead, this.lines.system.placeholders.length > 0);
  }

  wouldLeaveEmpty(name: PromptName, vars: TemplateVariables): boolean {
    return this.lines[name].template.wouldLeaveEmpty(vars);
  }

  style(name: PromptName): SpeakStyle {
    return this.lines[name].style;
  }

  audio(name: AudioName): AudioClip | undefined {
    return this.clips[name];
  }
}

/** Missing or broken optional files are replaced by their built-in default, front matter and all. */
export function buildPromptSet(load: FolderLoad, logger: Logger): PromptSet {
  const sets = new Map<string, PromptSet>();
  const hasLanguages = load.languages.length > 0 || load.routing !== NO_ROUTING;
  const defaultTag = hasLanguages ? load.routing.default : undefined;
  const tags = hasLanguages ? [...new Set([load.routing.default, ...load.languages.map((l) => l.tag)])] : [];
  const languages: PromptLanguages = Object.freeze({
    tags: Object.freeze(tags),
    routing: load.routing,
    of: (tag: string) => sets.get(tag) ?? sets.get(baseLanguage(tag)) ?? [...sets.entries()].find(([t]) => baseLanguage(t) === baseLanguage(tag))?.[1],
  });
  const main = buildOne(load.files, load.clips, logger, defaultTag, load.vocabulary, load.pronouncer, languages);
  if (defaultTag !== undefined) sets.set(defaultTag, main);
  for (const language of load.languages) {
    // The folder's own language folder (prompts/en/ beside default: en) overrides the folder itself.
    const vocabulary = joinVocabularies(language.vocabulary, load.vocabulary);
    sets.set(language.tag, buildOne(language.files, language.clips, logger, language.tag, vocabulary, layerPronunciations(load.pronouncer, language.pronouncer), languages));
  }
  return defaultTag !== undefined ? sets.get(defaultTag)! : main;
}

function buildOne(
  files: FolderLoad['files'],
  clips: FolderLoad['clips'],
  logger: Logger,
  language: string | undefined,
  vocabulary: readonly string[],
  pronouncer: Pronouncer,
  languages: PromptLanguages,
): PromptSet {
  const system = files.find((f) => f.spec.name === 'system');
  const settings = system?.template !== undefined && system.settings !== undefined ? system.settings : DEFAULT_SETTINGS;
  const lines = {} as Record<PromptName, PromptLine>;
  for (const spec of PROMPT_FILES) {
    const loaded = files.find((f) => f.spec === spec);
    const fromDisk = loaded?.template !== undefined;
    const template = loaded?.template ?? FALLBACK_TEMPLATES.get(spec.name);
    // Unreachable: a required file without a template is an error, and errors in required files stop the load before this.
    if (!template) throw new Error(`${spec.file} has no usable version`);
    const own = fromDisk ? (loaded?.style ?? NO_STYLE) : NO_STYLE;
    lines[spec.name] = Object.freeze({
      template,
      placeholders: Object.freeze([...template.placeholders]) as string[],
      style: layerStyles(settings.style, spec.style ?? NO_STYLE, own),
    });
  }
  return new LoadedPromptSet(Object.freeze(lines), Object.freeze({ ...clips }), settings, logger, language, vocabulary, pronouncer, languages);
}
