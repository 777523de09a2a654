import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Logger } from '../logger.js';
import type { HeardLine } from './ports/call-summary.js';
import type { Reply } from './speech/reply.js';
import { keepWords, type Redact } from './ports/redaction.js';

/** What is left of the budget after a cut: the next turns fit without another one. */
const KEPT_AFTER_CUT = 0.75;

/**
 * A caller's words: `text` as the model hears them, `kept` as the record keeps them (CallerLine), when known;
 * `note`, Hotline's note after them (never the caller's words: the record does not keep it).
 */
type HistoryEntry = { role: 'user'; text: string; kept?: string; seq?: number; note?: string } | { role: 'assistant'; reply: Reply };

/**
 * The conversation as the LLM sees it. Replies are kept by reference, so a
 * barge-in after generation still cuts what the next request shows.
 */
export class History {
  private readonly entries: HistoryEntry[] = [];
  /** Entries after the greeting left out of every request from now on: a cut once made stays (see messages). */
  private dropped = 0;
  /** Hotline's notes for the model (a text message that failed), waiting for the next caller message. */
  private notes: string[] = [];

  constructor(
    /** Budget of the history sent to the LLM, in characters; the oldest turns go first. */
    private readonly maxChars: number,
    private readonly log: Logger,
    /** What the record keeps of the words: personal data taken out. */
    private readonly redact: Redact = keepWords,
  ) {}

  addUser(text: string, kept?: { readonly seq: number; readonly text: string }): void {
    this.entries.push({ role: 'user', text, ...(kept && { kept: kept.text, seq: kept.seq }), ...this.takeNotes() });
  }

  /**
   * Something the model must know that the caller did not say: it joins the caller's next words,
   * after them, or stands alone with addNotes(). Never part of what the caller heard or said.
   */
  addNote(note: string): void {
    this.notes.push(note);
  }

  get notesWaiting(): boolean {
    return this.notes.length > 0;
  }

  /** The notes waiting, as a message of their own (a turn starts for them); their text. */
  addNotes(): string {
    const { note = '' } = this.takeNotes();
    this.entries.push({ role: 'user', text: '', note });
    return note;
  }

  private takeNotes(): { note?: string } {
    if (this.notes.length === 0) return {};
    return { note: this.notes.splice(0).join('\n') };
  }

  /** A later utterance completed a number this one began: it is kept as `text` now, and heard so too by the model with `forModel`. */
  amendUser(seq: number, text: string, forModel: boolean): void {
    for (let at = this.entries.length - 1; at >= 0; at--) {
      const entry = this.entries[at]!;
      if (entry.role !== 'user' || entry.seq !== seq) continue;
      entry.kept = text;
      if (forModel) entry.text = text;
      return;
    }
  }

  addReply(reply: Reply): void {
    this.entries.push({ role: 'assistant', reply });
  }

  /** The conversation as the caller heard it, for the call's record. */
  heard(): HeardLine[] {
    const lines: HeardLine[] = [];
    for (const entry of this.entries) {
      const text = entry.role === 'user' ? (entry.kept ?? entry.text) : entry.reply.heardText();
      if (text.trim() !== '') lines.push({ role: entry.role, text: this.redact(text) });
    }
    return lines;
  }

  /**
   * The messages of the next LLM request. Earlier requests' messages come
   * first, byte for byte as they were sent: only new ones are appended, so a
   * provider can serve everything before them from its cache. Beyond the
   * budget the oldest turns are left out; the system prompt, the greeting and
   * the newest turn always stay. Whole entries go, so every tool call keeps
   * its result.
   *
   * A cut changes what follows the greeting, so every later request misses
   * the cache from there: it is made rarely, down to KEPT_AFTER_CUT of the
   * budget at once, and stays where it is until the budget is reached again.
   */
  messages(systemPrompt: string): ChatCompletionMessageParam[] {
    const groups = this.entries.map((entry): ChatCompletionMessageParam[] =>
      entry.role === 'user' ? [{ role: 'user', content: withNote(entry.text, entry.note) }] : entry.reply.toMessages(),
    );
    const sizeOf = (group: ChatCompletionMessageParam[]) => JSON.stringify(group).length;
    const [greeting = [], ...rest] = groups;
    const budget = this.maxChars - systemPrompt.length - sizeOf(greeting);
    const sizes = rest.map(sizeOf);
    let kept = sizes.slice(this.dropped).reduce((sum, size) => sum + size, 0);
    if (kept > budget) {
      const before = this.dropped;
      while (this.dropped < rest.length - 1 && kept > budget * KEPT_AFTER_CUT) kept -= sizes[this.dropped++]!;
      this.log.debug({ dropped: this.dropped, now: this.dropped - before }, 'oldest turns left out of the LLM requests from now on');
    }
    return [{ role: 'system', content: systemPrompt }, ...greeting, ...rest.slice(this.dropped).flat()];
  }
}

/** The caller's words and Hotline's note after them, as the model reads them. */
function withNote(text: string, note: string | undefined): string {
  if (note === undefined) return text;
  return text === '' ? note : `${text}\n\n${note}`;
}
