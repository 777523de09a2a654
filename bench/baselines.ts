/**
 * Speech strategies replayed on recorded token streams (text + the time each
 * token was written), so they are compared on exactly the tokens Hotline saw
 * in the same run, not on a second run with its own timing noise.
 */
import { SentenceChunker } from '../src/call/speech/chunker.js';
import { toSpeech } from '../src/call/speech/speech-text.js';

export interface TimedToken {
  readonly text: string;
  readonly at: number;
}

export interface Release {
  readonly text: string;
  /** Time of the token that let the sentence go. */
  readonly at: number;
}

/**
 * Index of the token that completes each sentence Hotline speaks, in order,
 * found by replaying the tokens through Hotline's own chunker and speech
 * filter. The last sentence is completed by the last token (the stream's end
 * follows it in the same write burst).
 *
 * Deciding this from the text rather than by "the last token written before
 * the speak arrived" keeps the attribution right even when the process is so
 * loaded that the next token is written before the speak is read.
 */
export function completingTokenIndices(tokens: readonly string[]): number[] {
  const chunker = new SentenceChunker();
  const out: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    for (const chunk of chunker.push(tokens[i] ?? '')) if (toSpeech(chunk) !== '') out.push(i);
  }
  for (const chunk of chunker.flush()) if (toSpeech(chunk) !== '') out.push(tokens.length - 1);
  return out;
}

/** Baseline (a), the voice service's sample bots: one speak with the whole reply once the LLM has finished. */
export function wholeReplyRelease(tokens: readonly TimedToken[]): Release | undefined {
  const last = tokens.at(-1);
  if (!last) return undefined;
  return { text: tokens.map((t) => t.text).join('').trim(), at: last.at };
}

const TERMINAL = /[.!?…]/u;
const CLOSER = /["'”’)\]»]/u;
const SPACE = /\s/u;
const LOWER = /\p{Ll}/u;
/** Honorifics before a dot, which those frameworks protect the same way. */
const HONORIFIC = /(?:^|\s)(?:Mr|Mrs|Ms|Dr|St|Prof)$/u;

/**
 * Baseline (b), the way common voice frameworks split a stream (LiveKit's
 * buffered sentence stream and the like): a sentence is released only once
 * the first non-space character of the next sentence has arrived, because the
 * splitter needs to see two sentences to be sure of the first. The last
 * sentence goes at the end of the stream.
 *
 * A boundary is terminal punctuation (and closing quotes) followed by
 * whitespace; a lowercase continuation ("9 a.m. to 6") and an honorific
 * ("Dr. Meyer") are no boundary.
 * Line breaks alone are not boundaries, as in those frameworks, which fold
 * them into spaces.
 */
export class NextSentenceSplitter {
  private buf = '';
  /** Start of the pending sentence in buf. */
  private start = 0;
  /** Next index to examine. */
  private scan = 0;
  /** End (exclusive) of a terminal cluster that is followed by whitespace, awaiting the next character. */
  private candidate = -1;

  push(text: string, at: number): Release[] {
    this.buf += text;
    const out: Release[] = [];
    while (this.scan < this.buf.length) {
      const i = this.scan;
      const c = this.buf.charAt(i);
      if (this.candidate >= 0) {
        if (SPACE.test(c)) {
          this.scan++;
          continue;
        }
        if (!LOWER.test(c)) this.release(out, this.candidate, i, at);
        this.candidate = -1;
      }
      if (TERMINAL.test(c)) {
        let end = i + 1;
        while (end < this.buf.length && (TERMINAL.test(this.buf.charAt(end)) || CLOSER.test(this.buf.charAt(end)))) end++;
        // The cluster or its trailing whitespace may still be arriving.
        if (end === this.buf.length) return out;
        if (SPACE.test(this.buf.charAt(end)) && !HONORIFIC.test(this.buf.slice(Math.max(this.start, i - 5), i))) {
          this.candidate = end;
        }
        this.scan = end;
        continue;
      }
      this.scan++;
    }
    return out;
  }

  /** The stream ended: whatever is pending goes as the last sentence. */
  end(at: number): Release[] {
    const text = this.buf.slice(this.start).trim();
    this.buf = '';
    this.start = 0;
    this.scan = 0;
    this.candidate = -1;
    return text === '' ? [] : [{ text, at }];
  }

  private release(out: Release[], end: number, next: number, at: number): void {
    const text = this.buf.slice(this.start, end).trim();
    if (text !== '') out.push({ text, at });
    this.start = next;
  }
}

/** Every release of baseline (b) over a recorded stream. */
export function nextSentenceReleases(tokens: readonly TimedToken[]): Release[] {
  const splitter = new NextSentenceSplitter();
  const out: Release[] = [];
  for (const token of tokens) out.push(...splitter.push(token.text, token.at));
  const last = tokens.at(-1);
  if (last) out.push(...splitter.end(last.at));
  return out;
}
