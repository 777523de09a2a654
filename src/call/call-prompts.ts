import type { Logger } from '../logger.js';
import type { PendingCall } from './ports/outbound-request.js';
import { builtinVariables } from '../prompts/builtins.js';
import type { AudioClip, AudioName, PromptName, PromptSet, SpeakStyle } from '../prompts/prompt-store.js';
import type { SystemPrompt } from '../prompts/static-prefix.js';
import type { Session } from '../protocol/events.js';

/** What a call's system prompt is before the call has begun: nothing to render yet. */
const NOT_BEGUN: SystemPrompt = { text: '', staticChars: 0 };

/**
 * The prompts of one call, rendered with its variables: the built-ins and,
 * for an outbound call Hotline requested, the request's own.
 */
export class CallPrompts {
  private vars: Record<string, string | undefined> = {};
  private begun = false;
  /**
   * system.md rendered with the call's variables: once, so every request of the call sends the same
   * text, and at the first request, not as the call begins, so a call that never gets that far (a
   * caller who is greeted and hangs up, one waiting in silence) holds no copy of it (about 4.6 KB of
   * the shipped prompt, a fifth of what an idle call held). The variables it is rendered from are
   * fixed when they are set, the clock's among them, so rendering later gives the same text.
   */
  private systemPrompt: SystemPrompt | undefined;

  constructor(
    /** The prompts as they were when the call began (an edit applies from the next call), in the call's language. */
    private prompts: PromptSet,
    private readonly timeZone: string | undefined,
    private readonly log: Logger,
  ) {}

  /** The call's template variables, for its tools. */
  get variables(): Readonly<Record<string, string | undefined>> {
    return this.vars;
  }

  /** The caller's record (a CRM lookup) adds variables; the built-ins and an outbound request's own stay as they are. */
  addContext(fields: Readonly<Record<string, string>>): void {
    if (Object.keys(fields).length === 0) return;
    this.vars = { ...fields, ...this.vars };
    this.systemPrompt = undefined;
  }

  /** The system prompt of this call; empty before it has begun. */
  get system(): SystemPrompt {
    if (!this.begun) return NOT_BEGUN;
    return (this.systemPrompt ??= this.renderSystem());
  }

  get settings(): PromptSet['settings'] {
    return this.prompts.settings;
  }

  /** The prompts in use: the call's language's, of the version the call began with. */
  get current(): PromptSet {
    return this.prompts;
  }

  get language(): string | undefined {
    return this.prompts.language;
  }

  get languages(): PromptSet['languages'] {
    return this.prompts.languages;
  }

  /**
   * The call goes on in another language: its lines, voice and system prompt from here on. The
   * system prompt is rendered again, so the next request says it in that language.
   */
  use(prompts: PromptSet): void {
    if (prompts === this.prompts) return;
    this.prompts = prompts;
    // Before the call has begun there is nothing to render yet: begin() does.
    if (!this.begun) return;
    if (prompts.language !== undefined) this.vars = { ...this.vars, language: prompts.language };
    this.systemPrompt = undefined;
  }

  /** The call has started: its variables, and so its system prompt, are known from here on. */
  begin(session: Pick<Session, 'from_phone_number' | 'to_phone_number' | 'direction'>, variables: Readonly<Record<string, string>> | undefined): void {
    this.begun = true;
    this.vars = {
      ...builtinVariables(
        { from: session.from_phone_number, to: session.to_phone_number, direction: session.direction },
        new Date(),
        this.timeZone,
      ),
      ...variables,
      // The language the call is in, as its prompts say it, whatever the request wrote (`Turkish`, `TR`).
      ...(this.prompts.language !== undefined ? { language: this.prompts.language } : {}),
    };
    this.systemPrompt = undefined;
  }

  /** How the line of `name` is spoken. */
  style(name: PromptName): SpeakStyle {
    return this.prompts.style(name);
  }

  audio(name: AudioName): AudioClip | undefined {
    return this.prompts.audio(name);
  }

  render(name: PromptName): string {
    return this.prompts.render(name, this.vars, (placeholder) =>
      this.log.warn({ prompt: name, placeholder }, 'prompt placeholder has no value; rendered empty'),
    );
  }

  private renderSystem(): SystemPrompt {
    return this.prompts.renderSystem(this.vars, (placeholder) =>
      this.log.warn({ prompt: 'system', placeholder }, 'prompt placeholder has no value; rendered empty'),
    );
  }

  /** A requested outbound call gets its tailored greeting, unless that would leave a hole in it. */
  greeting(outbound: boolean, request: PendingCall | undefined): [PromptName, string] {
    const name: PromptName = !outbound
      ? 'greeting'
      : request && !this.prompts.wouldLeaveEmpty('outboundGreeting', this.vars)
        ? 'outboundGreeting'
        : 'outboundGenericGreeting';
    return [name, this.render(name)];
  }
}
