import { APIError } from 'openai';
import { describe, expect, test } from 'vitest';
import { retryAfterMs } from '../src/call/turn/llm-retry.js';
import { toSpeech } from '../src/call/speech/speech-text.js';
import { ToolCallAssembler } from '../src/call/turn/tool-call-assembler.js';
import { readDelta, type ToolCallPiece } from '../src/llm/delta.js';
import { ThinkTagFilter } from '../src/llm/think-tags.js';

const withDelta = (delta: unknown): unknown => ({ choices: [{ index: 0, delta }] });

describe('readDelta: every server shape, nothing trusted', () => {
  test('plain content, array content (text spoken, thinking not), refusal', () => {
    expect(readDelta(withDelta({ content: 'Hello' }))).toMatchObject({ text: 'Hello', reasoning: false });
    expect(
      readDelta(withDelta({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'hmm' }] }, { type: 'text', text: 'Hi there' }] })),
    ).toMatchObject({ text: 'Hi there', reasoning: true });
    expect(readDelta(withDelta({ content: null, refusal: "I can't help with that." }))).toMatchObject({ text: "I can't help with that." });
  });

  test('reasoning under every name is a sign of life, never text', () => {
    for (const delta of [{ reasoning_content: 'x' }, { reasoning: 'x' }, { reasoning_details: [{ type: 'reasoning.text' }] }]) {
      expect(readDelta(withDelta(delta))).toMatchObject({ text: '', reasoning: true });
    }
    expect(readDelta(withDelta({ reasoning_content: '' }))).toMatchObject({ reasoning: false });
  });

  test('chunks without a usable delta are nothing, never an exception', () => {
    for (const bad of [null, 42, 'x', [], {}, { choices: 'x' }, { choices: [] }, { choices: [null] }, { choices: [{ delta: 'x' }] }]) {
      expect(readDelta(bad)).toBeUndefined();
    }
    expect(readDelta(withDelta({ content: 42, tool_calls: 'x' }))).toMatchObject({ text: '', toolCalls: [] });
  });

  test('tool-call indexes: small whole numbers, absent, or refused', () => {
    const calls = (index: unknown): ToolCallPiece[] => readDelta(withDelta({ tool_calls: [{ index, function: { name: 'f' } }] }))!.toolCalls;
    expect(calls(0)).toMatchObject([{ index: 0, name: 'f' }]);
    expect(calls(undefined)).toMatchObject([{ index: undefined }]);
    for (const bad of [4294967294, -1, 1.5, '__proto__', '0', {}, 64]) expect(calls(bad)).toEqual([]);
    expect(readDelta(withDelta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: { a: 1 } } }] }))!.toolCalls[0]!.arguments).toBe('{"a":1}');
  });
});

describe('ToolCallAssembler', () => {
  const piece = (p: Partial<ToolCallPiece>): ToolCallPiece => ({ index: undefined, id: undefined, name: undefined, arguments: undefined, ...p });

  test('keyed by index, starting anywhere, in index order', () => {
    const tools = new ToolCallAssembler((i) => `fallback_${i}`);
    tools.accept(piece({ index: 1, id: 'b', name: 'speak', arguments: '{"te' }));
    tools.accept(piece({ index: 1, name: '', arguments: 'xt":"hi"}' }));
    tools.accept(piece({ index: 0, name: 'hangup' }));
    expect(tools.all().map((c) => [c.index, c.id, c.name, c.args])).toEqual([
      [0, 'fallback_0', 'hangup', ''],
      [1, 'b', 'speak', '{"text":"hi"}'],
    ]);
  });

  test('without an index: a piece naming no other call continues the last, any other is the next', () => {
    const tools = new ToolCallAssembler((i) => `fallback_${i}`);
    tools.accept(piece({ id: 'a', name: 'speak', arguments: '{"text":' }));
    tools.accept(piece({ arguments: '"hi"}' }));
    tools.accept(piece({ id: 'b', name: 'hangup', arguments: '{}' }));
    expect(tools.all().map((c) => [c.index, c.id, c.name, c.args])).toEqual([
      [0, 'a', 'speak', '{"text":"hi"}'],
      [1, 'b', 'hangup', '{}'],
    ]);
  });

  test('a name repeated on every piece is one name; too many calls and too long arguments are bounded', () => {
    const tools = new ToolCallAssembler((i) => `c${i}`);
    tools.accept(piece({ index: 0, name: 'speak' }));
    tools.accept(piece({ index: 0, name: 'speak', arguments: '{}' }));
    expect(tools.all()[0]!.name).toBe('speak');
    for (let i = 1; i < 40; i++) tools.accept(piece({ index: i, name: 'f' }));
    expect(tools.all()).toHaveLength(16);
    const long = new ToolCallAssembler((i) => `c${i}`);
    for (let i = 0; i < 100; i++) long.accept(piece({ index: 0, name: 'f', arguments: 'x'.repeat(1000) }));
    expect(long.all()[0]!.overflow).toBe(true);
    expect(long.all()[0]!.args.length).toBeLessThanOrEqual(32 * 1024);
  });
});

describe('ThinkTagFilter', () => {
  test('hides <think> blocks, also when tags are cut between deltas', () => {
    const filter = new ThinkTagFilter();
    const out = ['<thi', 'nk>\nI should', ' be brief.</th', 'ink>\n\nCross at', ' the <b>light</b>.'].map((d) => filter.push(d));
    expect(out.join('') + filter.flush()).toBe('\n\nCross at the <b>light</b>.');
  });

  test('a "<" that never becomes a tag is text', () => {
    const filter = new ThinkTagFilter();
    expect(filter.push('3 <') + filter.push(' 4') + filter.flush()).toBe('3 < 4');
    const end = new ThinkTagFilter();
    expect(end.push('x <thi') + end.flush()).toBe('x <thi');
  });
});

describe('Retry-After', () => {
  const error = (headers: Record<string, string>): APIError => APIError.generate(429, undefined, 'rate limited', new Headers(headers));

  test('seconds, milliseconds or a date; nothing usable is 0', () => {
    expect(retryAfterMs(error({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(error({ 'retry-after-ms': '350', 'retry-after': '2' }))).toBe(350);
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(retryAfterMs(error({ 'retry-after': 'Mon, 23 Nov 2026 10:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(error({ 'retry-after': 'soon' }))).toBe(0);
    expect(retryAfterMs(new Error('x'))).toBe(0);
  });
});

describe('citation markers', () => {
  test('are not spoken; brackets that are no citation stay', () => {
    expect(toSpeech('About 3.7 million people [1][5].')).toBe('About 3.7 million people.');
    expect(toSpeech('Growth was strong [2, 3] and steady[^4].')).toBe('Growth was strong and steady.');
    expect(toSpeech('Press [star] then [A].')).toBe('Press [star] then [A].');
  });
});
