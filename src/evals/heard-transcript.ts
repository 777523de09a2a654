/**
 * The call as the simulated caller heard it: each of the agent's speeches as
 * it began to play, cut at the word where the caller cut in, and what the
 * caller said, typed or left unsaid. The judge grades this, not what the
 * agent meant to say: a promise cut off before it was heard was never made.
 */

export interface TranscriptLine {
  readonly who: 'agent' | 'caller';
  text: string;
  /** The caller cut this speech off after `text`. */
  cut?: boolean;
  /** The caller's line was keys or silence, not words. */
  readonly kind?: 'keys' | 'silence';
}

export class HeardTranscript {
  readonly lines: TranscriptLine[] = [];
  private readonly speechWaiters = new Set<() => void>();

  agentSpoke(text: string): void {
    this.lines.push({ who: 'agent', text });
    for (const wake of [...this.speechWaiters]) wake();
  }

  /** The caller cut the speech `text` off after `wordsHeard` of its words. */
  agentCut(text: string, wordsHeard: number): void {
    for (let i = this.lines.length - 1; i >= 0; i--) {
      const line = this.lines[i];
      if (line?.who !== 'agent' || line.text !== text || line.cut) continue;
      const words = text.split(/\s+/).filter(Boolean);
      if (wordsHeard >= words.length) return;
      // Not a word of it reached the caller: it was never said to them.
      if (wordsHeard === 0) this.lines.splice(i, 1);
      else Object.assign(line, { text: words.slice(0, wordsHeard).join(' '), cut: true });
      return;
    }
  }

  callerSaid(text: string): void {
    this.lines.push({ who: 'caller', text });
  }

  callerPressed(keys: string): void {
    this.lines.push({ who: 'caller', text: keys, kind: 'keys' });
  }

  callerSilent(): void {
    this.lines.push({ who: 'caller', text: '', kind: 'silence' });
  }

  /** Resolves true at the agent's next speech, false when `signal` aborts first. */
  nextAgentSpeech(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (spoke: boolean): void => {
        this.speechWaiters.delete(wake);
        signal.removeEventListener('abort', aborted);
        resolve(spoke);
      };
      const wake = (): void => done(true);
      const aborted = (): void => done(false);
      this.speechWaiters.add(wake);
      signal.addEventListener('abort', aborted, { once: true });
    });
  }

  /** One line each, as the judge and the reports read it. */
  text(): string {
    return this.lines.map(lineText).join('\n');
  }
}

export function lineText(line: TranscriptLine): string {
  if (line.who === 'agent') return `Agent: ${line.text}${line.cut ? ' — (the caller cut in)' : ''}`;
  if (line.kind === 'keys') return `Caller: (presses ${line.text} on the keypad)`;
  if (line.kind === 'silence') return 'Caller: (says nothing)';
  return `Caller: ${line.text}`;
}
