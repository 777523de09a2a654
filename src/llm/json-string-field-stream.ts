/**
 * Incremental extractor for one top-level string field of a JSON object that
 * arrives in arbitrary pieces (streamed tool-call arguments), so the field's
 * text can be spoken before the JSON is complete.
 *
 * A single-pass state machine: every character of the input is looked at
 * once, nothing is buffered except an unfinished escape or a high surrogate
 * waiting for its partner, so cost stays linear however small the pieces are.
 */

type Mode =
  | 'start' // before the top-level '{'
  | 'keyOrClose' // just after '{'
  | 'key' // after ',' inside an object
  | 'colon'
  | 'value'
  | 'valueOrClose' // just after '['
  | 'afterValue'
  | 'string'
  | 'escape'
  | 'unicode'
  | 'number'
  | 'literal'
  | 'end' // top-level object closed without the field being found
  | 'done'
  | 'failed';

/** What the string currently being read is for. */
type StringRole = 'key' | 'skip' | 'target';

/**
 * Sub-states of the JSON number grammar `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
 * Only ZERO, INT, FRAC and EXP may end a number.
 */
const enum Num {
  Minus,
  Zero,
  Int,
  FracStart,
  Frac,
  ExpStart,
  ExpSign,
  Exp,
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const REPLACEMENT = '\uFFFD';

const SIMPLE_ESCAPES: ReadonlyMap<number, number> = new Map([
  [0x22, 0x22], // \"
  [0x5c, 0x5c], // \\
  [0x2f, 0x2f], // \/
  [0x62, 0x08], // \b
  [0x66, 0x0c], // \f
  [0x6e, 0x0a], // \n
  [0x72, 0x0d], // \r
  [0x74, 0x09], // \t
]);

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdfff;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

export class JsonStringFieldStream {
  private readonly field: string;
  private mode: Mode = 'start';
  /** Open containers, innermost last; true for an object. The top-level object is `stack[0]`. */
  private readonly stack: boolean[] = [];

  private role: StringRole = 'skip';
  /**
   * How many code units of the current top-level key matched `field` so far;
   * -1 once it cannot match. Compared unit by unit so keys never need buffering.
   */
  private keyMatch = -1;
  /** Set when the key just read is `field`, so the next value is the one we want (if a string). */
  private valueIsTarget = false;

  private hexDigits = 0;
  private hexUnit = 0;
  private num: Num = Num.Minus;
  private literal = '';
  private literalPos = 0;

  /** A high surrogate from the target value waiting for its low half; -1 if none. */
  private pendingHigh = -1;
  /** Output decoded during the current `push`. */
  private out = '';

  constructor(field = 'text') {
    this.field = field;
  }

  get done(): boolean {
    return this.mode === 'done';
  }

  get failed(): boolean {
    return this.mode === 'failed';
  }

  push(piece: string): string {
    if (this.mode === 'done' || this.mode === 'failed') return '';
    this.out = '';
    const n = piece.length;
    let i = 0;
    while (i < n) {
      if (this.mode === 'string' && this.role === 'target' && this.pendingHigh < 0) {
        // Copy runs of ordinary characters as one slice instead of char by char.
        let j = i;
        while (j < n) {
          const c = piece.charCodeAt(j);
          if (c === QUOTE || c === BACKSLASH || isSurrogate(c)) break;
          j++;
        }
        if (j > i) {
          this.out += piece.slice(i, j);
          i = j;
          continue;
        }
      }
      this.step(piece.charCodeAt(i));
      i++;
      if (this.done || this.failed) break;
    }
    return this.out;
  }

  private step(c: number): void {
    switch (this.mode) {
      case 'start':
        if (isWhitespace(c)) return;
        if (c === 0x7b /* { */) {
          this.stack.push(true);
          this.mode = 'keyOrClose';
          return;
        }
        return this.fail();

      case 'keyOrClose':
        if (isWhitespace(c)) return;
        if (c === 0x7d /* } */) return this.close(true);
        return this.startKey(c);

      case 'key':
        if (isWhitespace(c)) return;
        return this.startKey(c);

      case 'colon':
        if (isWhitespace(c)) return;
        if (c === 0x3a /* : */) {
          this.mode = 'value';
          return;
        }
        return this.fail();

      case 'valueOrClose':
        if (isWhitespace(c)) return;
        if (c === 0x5d /* ] */) return this.close(false);
        return this.startValue(c);

      case 'value':
        if (isWhitespace(c)) return;
        return this.startValue(c);

      case 'afterValue':
        if (isWhitespace(c)) return;
        if (c === 0x2c /* , */) {
          this.mode = this.stack[this.stack.length - 1] === true ? 'key' : 'value';
          return;
        }
        if (c === 0x7d /* } */) return this.close(true);
        if (c === 0x5d /* ] */) return this.close(false);
        return this.fail();

      case 'string':
        if (c === QUOTE) return this.endString();
        if (c === BACKSLASH) {
          this.mode = 'escape';
          return;
        }
        // Raw control characters are invalid JSON, but models occasionally
        // emit them; dropping the whole utterance over a newline would be worse.
        return this.unit(c);

      case 'escape': {
        if (c === 0x75 /* u */) {
          this.hexDigits = 0;
          this.hexUnit = 0;
          this.mode = 'unicode';
          return;
        }
        const decoded = SIMPLE_ESCAPES.get(c);
        if (decoded === undefined) return this.fail();
        this.mode = 'string';
        return this.unit(decoded);
      }

      case 'unicode': {
        const h = hexValue(c);
        if (h < 0) return this.fail();
        this.hexUnit = this.hexUnit * 16 + h;
        if (++this.hexDigits < 4) return;
        this.mode = 'string';
        return this.unit(this.hexUnit);
      }

      case 'number':
        return this.numberChar(c);

      case 'literal':
        if (c !== this.literal.charCodeAt(this.literalPos)) return this.fail();
        if (++this.literalPos === this.literal.length) this.mode = 'afterValue';
        return;

      case 'end':
        if (isWhitespace(c)) return;
        return this.fail();

      case 'done':
      case 'failed':
        return;
    }
  }

  private startKey(c: number): void {
    if (c !== QUOTE) return this.fail();
    this.role = 'key';
    this.keyMatch = this.stack.length === 1 ? 0 : -1;
    this.mode = 'string';
  }

  private startValue(c: number): void {
    const isTarget = this.valueIsTarget;
    this.valueIsTarget = false;
    if (c === QUOTE) {
      this.role = isTarget ? 'target' : 'skip';
      this.mode = 'string';
      return;
    }
    // A non-string value under our key is skipped like any other, so a later
    // duplicate key with a string value can still be picked up.
    if (c === 0x7b /* { */) {
      this.stack.push(true);
      this.mode = 'keyOrClose';
      return;
    }
    if (c === 0x5b /* [ */) {
      this.stack.push(false);
      this.mode = 'valueOrClose';
      return;
    }
    if (c === 0x2d /* - */) {
      this.num = Num.Minus;
      this.mode = 'number';
      return;
    }
    if (isDigit(c)) {
      this.num = c === 0x30 ? Num.Zero : Num.Int;
      this.mode = 'number';
      return;
    }
    const literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : c === 0x6e ? 'null' : '';
    if (literal === '') return this.fail();
    this.literal = literal;
    this.literalPos = 1;
    this.mode = 'literal';
  }

  private close(isObject: boolean): void {
    if (this.stack.pop() !== isObject) return this.fail();
    this.mode = this.stack.length === 0 ? 'end' : 'afterValue';
  }

  private endString(): void {
    switch (this.role) {
      case 'key':
        this.valueIsTarget = this.keyMatch === this.field.length;
        this.mode = 'colon';
        return;
      case 'skip':
        this.mode = 'afterValue';
        return;
      case 'target':
        if (this.pendingHigh >= 0) {
          this.out += REPLACEMENT;
          this.pendingHigh = -1;
        }
        this.mode = 'done';
        return;
    }
  }

  /** One decoded UTF-16 code unit of the current string. */
  private unit(u: number): void {
    if (this.role === 'key') {
      if (this.keyMatch >= 0) {
        this.keyMatch =
          this.keyMatch < this.field.length && this.field.charCodeAt(this.keyMatch) === u
            ? this.keyMatch + 1
            : -1;
      }
      return;
    }
    if (this.role === 'skip') return;

    // Target value: pair surrogates whether they came raw (possibly split
    // across pieces) or as \u escapes, so a half pair is never handed out.
    if (this.pendingHigh >= 0) {
      const high = this.pendingHigh;
      this.pendingHigh = -1;
      if (u >= 0xdc00 && u <= 0xdfff) {
        this.out += String.fromCharCode(high, u);
        return;
      }
      this.out += REPLACEMENT;
    }
    if (isHighSurrogate(u)) {
      this.pendingHigh = u;
      return;
    }
    this.out += isSurrogate(u) ? REPLACEMENT : String.fromCharCode(u);
  }

  private numberChar(c: number): void {
    const digit = isDigit(c);
    switch (this.num) {
      case Num.Minus:
        if (!digit) return this.fail();
        this.num = c === 0x30 ? Num.Zero : Num.Int;
        return;
      case Num.Zero:
      case Num.Int:
        if (digit && this.num === Num.Int) return;
        if (c === 0x2e /* . */) {
          this.num = Num.FracStart;
          return;
        }
        if (c === 0x65 || c === 0x45 /* e E */) {
          this.num = Num.ExpStart;
          return;
        }
        break;
      case Num.FracStart:
        if (!digit) return this.fail();
        this.num = Num.Frac;
        return;
      case Num.Frac:
        if (digit) return;
        if (c === 0x65 || c === 0x45) {
          this.num = Num.ExpStart;
          return;
        }
        break;
      case Num.ExpStart:
        if (c === 0x2b || c === 0x2d /* + - */) {
          this.num = Num.ExpSign;
          return;
        }
        if (!digit) return this.fail();
        this.num = Num.Exp;
        return;
      case Num.ExpSign:
        if (!digit) return this.fail();
        this.num = Num.Exp;
        return;
      case Num.Exp:
        if (digit) return;
        break;
    }
    // The number ended at a character that belongs to what follows it.
    this.mode = 'afterValue';
    this.step(c);
  }

  private fail(): void {
    this.mode = 'failed';
    this.pendingHigh = -1;
  }
}
