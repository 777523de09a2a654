/** How keypad input is collected into one entry (system.md front matter `keypad`). */
export interface KeypadRules {
  /** The key that ends an entry ("please type your number, then the hash key"); undefined: none. */
  endKey: '#' | '*' | undefined;
  /** An entry also ends after this long without a key; 0 only by end key or length. */
  pauseMs: number;
  /** An entry ends once it is this long. */
  maxDigits: number;
}

/**
 * Collects the keys the caller types (one dtmf_received each) into one entry,
 * which reaches the model like the caller's words. An entry ends with the end
 * key, at its maximum length, or after a pause — a caller typing slowly must
 * not have half a customer number answered.
 */
export class KeypadEntry {
  private keys = '';
  private pause: NodeJS.Timeout | undefined;

  constructor(
    private readonly rules: KeypadRules,
    private readonly onEntry: (keys: string) => void,
  ) {}

  /** True while an entry has begun and not ended. */
  get collecting(): boolean {
    return this.keys !== '';
  }

  press(key: string): void {
    clearTimeout(this.pause);
    if (key === this.rules.endKey) {
      // The end key alone is an answer of its own ("press hash to confirm").
      return this.finish(this.keys === '' ? key : undefined);
    }
    this.keys += key;
    if (this.keys.length >= this.rules.maxDigits) return this.finish();
    if (this.rules.pauseMs > 0) this.pause = setTimeout(() => this.finish(), this.rules.pauseMs);
  }

  /** The keys typed so far, taken out of the entry (the caller spoke before finishing it). */
  take(): string {
    const keys = this.keys;
    this.cancel();
    return keys;
  }

  /** The entry is dropped (the call ended, or Hotline is ending it). */
  cancel(): void {
    clearTimeout(this.pause);
    this.keys = '';
  }

  private finish(alone?: string): void {
    clearTimeout(this.pause);
    const keys = alone ?? this.keys;
    this.keys = '';
    this.onEntry(keys);
  }
}

/** How typed input reads in the conversation: marked, so the model never takes it for speech. */
export function keypadText(keys: string): string {
  return `[keypad] ${keys}`;
}
