import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  completingTokenIndices,
  NextSentenceSplitter,
  nextSentenceReleases,
  wholeReplyRelease,
  type TimedToken,
} from '../bench/baselines.js';
import { bucketOf, selfTimes } from '../bench/profile-summary.js';
import {
  EXPECTED_SPEAKS,
  question,
  replyText,
  requestedTag,
  tagFor,
  tagOf,
  TEMPLATE_COUNT,
  templateOf,
} from '../bench/replies.js';
import { judge } from '../bench/report.js';
import { differences, formatMs, parseCounts, percentile, seededRandom, summarize } from '../bench/stats.js';
import { tokenize } from '../src/llm/tokenize.js';

const timed = (texts: string[], step = 10): TimedToken[] => texts.map((text, i) => ({ text, at: i * step }));

describe('percentile (nearest rank)', () => {
  it('returns observed values', () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(sorted, 50)).toBe(5);
    expect(percentile(sorted, 90)).toBe(9);
    expect(percentile(sorted, 99)).toBe(10);
    expect(percentile(sorted, 100)).toBe(10);
    expect(percentile(sorted, 0)).toBe(1);
  });

  it('is NaN for no samples and the value itself for one', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([7], 99)).toBe(7);
  });

  it('picks the 99th of 100 as p99', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 99)).toBe(99);
  });

  it('never falls outside the samples and grows with p', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { minLength: 1 }), fc.integer({ min: 0, max: 99 }), (values, p) => {
        const sorted = [...values].sort((a, b) => a - b);
        const v = percentile(sorted, p);
        expect(v).toBeGreaterThanOrEqual(sorted[0] ?? 0);
        expect(v).toBeLessThanOrEqual(sorted.at(-1) ?? 0);
        expect(percentile(sorted, p + 1)).toBeGreaterThanOrEqual(v);
      }),
    );
  });
});

describe('summarize', () => {
  it('sorts numerically, not as text', () => {
    const s = summarize([10, 9, 100, 1, 2]);
    expect(s).toMatchObject({ count: 5, p50: 9, max: 100 });
    expect(s.mean).toBeCloseTo(24.4);
  });

  it('reports NaN for no samples', () => {
    const s = summarize([]);
    expect(s.count).toBe(0);
    expect(s.p50).toBeNaN();
    expect(s.max).toBeNaN();
  });

  it('leaves its input unsorted', () => {
    const values = [3, 1, 2];
    summarize(values);
    expect(values).toEqual([3, 1, 2]);
  });
});

describe('small helpers', () => {
  it('differences pairs values and refuses uneven arrays', () => {
    expect(differences([5, 7], [1, 2])).toEqual([4, 5]);
    expect(() => differences([1], [])).toThrow();
  });

  it('seededRandom repeats its sequence for a seed and stays in [0, 1)', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const first = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(seededRandom(43)()).not.toBe(first[0]);
    const mean = first.reduce((sum, x) => sum + x, 0) / first.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });

  it('formatMs keeps three significant figures', () => {
    expect(formatMs(0.12345)).toBe('0.123');
    expect(formatMs(1.2345)).toBe('1.23');
    expect(formatMs(12.345)).toBe('12.3');
    expect(formatMs(1234.5)).toBe('1235');
    expect(formatMs(Number.NaN)).toBe('–');
  });

  it('parseCounts reads lists and rejects nonsense', () => {
    expect(parseCounts('1,100, 1_000')).toEqual([1, 100, 1000]);
    expect(() => parseCounts('1,x')).toThrow();
    expect(() => parseCounts('0')).toThrow();
    expect(() => parseCounts('1.5')).toThrow();
  });
});

describe('baseline (a): one speak after the reply', () => {
  it('goes at the last token with the whole text', () => {
    expect(wholeReplyRelease(timed(['Hi', ' there', '.', ' Bye', '.']))).toEqual({ text: 'Hi there. Bye.', at: 40 });
    expect(wholeReplyRelease([])).toBeUndefined();
  });
});

describe('baseline (b): a sentence goes once the next one begins', () => {
  it('releases a sentence with the token that brings the next non-space character', () => {
    const releases = nextSentenceReleases(timed(['Hello', ' there', '.', ' How', ' are', ' you', '?']));
    expect(releases).toEqual([
      { text: 'Hello there.', at: 30 },
      { text: 'How are you?', at: 60 },
    ]);
  });

  it('waits through whitespace-only tokens', () => {
    const releases = nextSentenceReleases(timed(['Done', '.', ' ', ' ', 'Next', ' one', '.']));
    expect(releases[0]).toEqual({ text: 'Done.', at: 40 });
  });

  it('keeps abbreviations, honorifics and decimals inside a sentence', () => {
    const text = 'Open from 9 a.m. to 6 p.m. today. Dr. Meyer costs $49.50 a visit. Bye!';
    const releases = nextSentenceReleases(timed(tokenize(text)));
    expect(releases.map((r) => r.text)).toEqual(['Open from 9 a.m. to 6 p.m. today.', 'Dr. Meyer costs $49.50 a visit.', 'Bye!']);
  });

  it('does not treat a line break alone as a boundary', () => {
    const releases = nextSentenceReleases(timed(['Options', ':', '\n', 'A', ' or', ' B', '.']));
    expect(releases).toEqual([{ text: 'Options:\nA or B.', at: 60 }]);
  });

  it('handles a terminal split from its following space across pushes', () => {
    const splitter = new NextSentenceSplitter();
    expect(splitter.push('Yes.', 1)).toEqual([]);
    expect(splitter.push(' ', 2)).toEqual([]);
    expect(splitter.push('No', 3)).toEqual([{ text: 'Yes.', at: 3 }]);
    expect(splitter.end(4)).toEqual([{ text: 'No', at: 4 }]);
    expect(splitter.end(5)).toEqual([]);
  });

  it('loses no text, however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('Hi', ' there', '.', ' ', '!', ' Next', ' a.m.', '\n', '?', ' x', '3', '.50'), { maxLength: 40 }), (pieces) => {
        const releases = nextSentenceReleases(timed(pieces));
        const squash = (s: string): string => s.replace(/\s+/g, '');
        expect(squash(releases.map((r) => r.text).join(''))).toBe(squash(pieces.join('')));
        for (let i = 1; i < releases.length; i++) expect(releases[i]!.at).toBeGreaterThanOrEqual(releases[i - 1]!.at);
      }),
    );
  });
});

describe("Hotline's completing tokens", () => {
  it('is the token that brings the space after a plain sentence end', () => {
    expect(completingTokenIndices(['Hello', ' there', '.', ' How', ' are', ' you', '?'])).toEqual([3, 6]);
  });

  it('is the line break itself when one ends a sentence', () => {
    expect(completingTokenIndices(['Options', ':', '\n', 'A', ' or', ' B', '.'])).toEqual([2, 6]);
  });

  it('skips chunks with nothing speakable', () => {
    expect(completingTokenIndices(['Hi', '.', '\n', '```', '\n', 'Bye', '.'])).toEqual([2, 6]);
  });

  it('is as early as baseline (b) on every template, and earlier at line breaks', () => {
    for (let i = 0; i < TEMPLATE_COUNT; i++) {
      const tokens = tokenize(replyText(tagFor(i)));
      const hotline = completingTokenIndices(tokens);
      const baseline = nextSentenceReleases(timed(tokens, 1));
      expect(hotline[0]).toBeLessThanOrEqual(baseline[0]!.at);
    }
  });
});

describe('traced replies', () => {
  it('every sentence of every template carries the tag, so every speak can be traced', () => {
    for (let i = 0; i < 40; i++) {
      const tag = tagFor(i * 7919);
      const tokens = tokenize(replyText(tag));
      const count = completingTokenIndices(tokens).length;
      expect(count).toBe(EXPECTED_SPEAKS[templateOf(tag)]);
      const text = replyText(tag);
      expect(text.split(tag).length - 1).toBeGreaterThanOrEqual(count);
    }
  });

  it('finds the tag in a question and in the request that carries it', () => {
    const tag = tagFor(12345);
    expect(tagOf(question(tag))).toBe(tag);
    expect(
      requestedTag({
        model: 'm',
        messages: [
          { role: 'system', content: 'You are … Zq0 is not a tag here' },
          { role: 'user', content: question(tagFor(1)) },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: question(tag) },
        ],
      }),
    ).toBe(tag);
    expect(requestedTag({ model: 'm', messages: [{ role: 'user', content: 'hello' }] })).toBeUndefined();
  });

  it('maps ids to templates round-robin', () => {
    expect([0, 1, 2, 3, 4].map((id) => templateOf(tagFor(id)))).toEqual([0, 1, 2, 3, 0].map((n) => n % TEMPLATE_COUNT));
  });
});

describe('targets', () => {
  it('passes at the limit and misses above it; no figure, no target', () => {
    expect(judge('a', 5, 5, 'ms')).toMatchObject({ pass: true });
    expect(judge('a', 5.01, 5, 'ms')).toMatchObject({ pass: false });
    expect(judge('stale', 0, 0, '')).toMatchObject({ pass: true });
    expect(judge('a', undefined, 5, 'ms')).toBeUndefined();
    expect(judge('a', Number.NaN, 5, 'ms')).toBeUndefined();
  });
});

describe('profile summary', () => {
  it('buckets frames by package, project folder or V8 category', () => {
    expect(bucketOf('file:///app/node_modules/openai/core/streaming.mjs', 'iterator')).toBe('openai');
    expect(bucketOf('file:///app/node_modules/@scope/pkg/x.js', 'f')).toBe('@scope/pkg');
    expect(bucketOf('file:///app/src/call/turn.ts', 'run')).toBe('src/call');
    expect(bucketOf('node:internal/timers', 'listOnTimeout')).toBe('node:internal/timers');
    expect(bucketOf('', '(garbage collector)')).toBe('(garbage collector)');
    expect(bucketOf('', 'writev')).toBe('(native)');
  });

  it('adds up self time per key from the sample deltas', () => {
    const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)'), children: [2, 3] },
        { id: 2, callFrame: frame('a', 'file:///x/src/call/a.ts') },
        { id: 3, callFrame: frame('(idle)') },
      ],
      startTime: 0,
      endTime: 40,
      samples: [2, 3, 2, 2],
      timeDeltas: [1000, 2000, 3000, 4000],
    };
    const rows = selfTimes(profile, (f) => f.functionName);
    expect(rows).toEqual([
      { name: 'a', ms: 8, share: 0.8 },
      { name: '(idle)', ms: 2, share: 0.2 },
    ]);
  });
});
