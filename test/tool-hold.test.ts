/** The hold lines a caller hears while a tool runs: when, and which. */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { holdLinesFor, ToolHold } from '../src/call/turn/tool-hold.js';

afterEach(() => {
  vi.useRealTimers();
});

function holdWith(lines: readonly string[], playing: { ms: number } = { ms: 0 }, timing = { holdMs: 500, repeatMs: 4000 }) {
  const said: { line: string; at: number }[] = [];
  const started = Date.now();
  const hold = new ToolHold(
    lines,
    {
      say: (line) => {
        said.push({ line, at: Date.now() - started });
        return true;
      },
      playbackRemainingMs: () => playing.ms,
    },
    timing,
  );
  return { hold, said };
}

describe('ToolHold', () => {
  test('nothing for a tool that answers within holdMs', () => {
    vi.useFakeTimers();
    const { hold, said } = holdWith(['One moment.', 'Still on it.']);
    hold.start();
    vi.advanceTimersByTime(499);
    hold.stop();
    vi.advanceTimersByTime(10_000);
    expect(said).toEqual([]);
  });

  test('the first line at holdMs, then one each time the last has played and repeatMs passed; never the same twice in a row', () => {
    vi.useFakeTimers();
    const started = Date.now();
    const said: { line: string; at: number }[] = [];
    // Each line takes a second to play: it is what is still playing right after it was said.
    const hold = new ToolHold(
      ['One moment.', 'Still on it.'],
      { say: (line) => (said.push({ line, at: Date.now() - started }), true), playbackRemainingMs: () => 1000 * (said.length > 0 ? 1 : 0) },
      { holdMs: 500, repeatMs: 4000 },
    );
    hold.start();
    vi.advanceTimersByTime(500);
    expect(said).toEqual([{ line: 'One moment.', at: 500 }]);
    vi.advanceTimersByTime(1000 + 4000 - 1);
    expect(said).toHaveLength(1);
    vi.advanceTimersByTime(1 + 5000 + 5000);
    expect(said).toEqual([
      { line: 'One moment.', at: 500 },
      { line: 'Still on it.', at: 5500 },
      { line: 'One moment.', at: 10_500 },
      { line: 'Still on it.', at: 15_500 },
    ]);
    hold.stop();
  });

  test('speech still playing when the tool starts: the first line waits for it', () => {
    vi.useFakeTimers();
    const { hold, said } = holdWith(['One moment.', 'Still on it.'], { ms: 2000 });
    hold.start();
    vi.advanceTimersByTime(1999);
    expect(said).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(said).toEqual([{ line: 'One moment.', at: 2000 }]);
    hold.stop();
  });

  test('now() says the next line at once and restarts the wait; a single line is never said twice in a row', () => {
    vi.useFakeTimers();
    const { hold, said } = holdWith(['Only this.']);
    hold.start();
    expect(hold.now()).toBe(true);
    expect(hold.now()).toBe(false);
    vi.advanceTimersByTime(60_000);
    expect(said.map((s) => s.line)).toEqual(['Only this.']);
  });

  test('a turn that can no longer speak ends the hold', () => {
    vi.useFakeTimers();
    let calls = 0;
    const hold = new ToolHold(['A.', 'B.'], { say: () => (calls++, false), playbackRemainingMs: () => 0 }, { holdMs: 100, repeatMs: 100 });
    hold.start();
    vi.advanceTimersByTime(10_000);
    expect(calls).toBe(1);
  });
});

describe('holdLinesFor', () => {
  const general = { first: "One moment, I'm checking that for you.", again: "Thanks for waiting, I'm still on it." };

  test("the tools' own lines in the order called, then the general line to take turns with", () => {
    expect(holdLinesFor([['Looking up your order.'], [], ['Checking the calendar.']], general)).toEqual([
      'Looking up your order.',
      'Checking the calendar.',
      general.again,
    ]);
  });

  test('tools without lines of their own: the two general lines', () => {
    expect(holdLinesFor([[], []], general)).toEqual([general.first, general.again]);
  });

  test('repeats and blanks are dropped', () => {
    expect(holdLinesFor([['Same.', ' ', 'Same.'], ['Same.']], general)).toEqual(['Same.', general.again]);
  });
});
