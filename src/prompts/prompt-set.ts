import type { Logger } from '../logger.js';
import type { AudioClip } from './audio-clips.js';
import type { FolderLoad } from './folder-load.js';
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
  const system = load.files.find((f) => f.spec.name === 'system');
  const settings = system?.template !== undefined && system.settings !== undefined ? system.settings : DEFAULT_SETTINGS;
  const lines = {} as Record<PromptName, PromptLine>;
  for (const spec of PROMPT_FILES) {
    const loaded = load.files.find((f) => f.spec === spec);
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
  return new LoadedPromptSet(Object.freeze(lines), Object.freeze({ ...load.clips }), settings, logger);
}
