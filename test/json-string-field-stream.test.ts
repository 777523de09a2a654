import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonStringFieldStream } from '../src/llm/json-string-field-stream.js';

interface Run {
  outputs: string[];
  text: string;
  stream: JsonStringFieldStream;
}

function run(pieces: readonly string[], field?: string): Run {
  const stream = new JsonStringFieldStream(field);
  const outputs = pieces.map((p) => stream.push(p));
  return { outputs, text: outputs.join(''), stream };
}

/** Every character as its own piece: the harshest splitting, including between surrogate halves. */
function unitPieces(json: string): string[] {
  return json.split('');
}

function splitAt(s: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let prev = 0;
  for (const p of points) {
    pieces.push(s.slice(prev, p));
    prev = p;
  }
  pieces.push(s.slice(prev));
  return pieces;
}

/** What the extractor promises for lone surrogates: U+FFFD in their place. */
function wellFormed(s: string): string {
  return s.replace(/\p{Surrogate}/gu, '\uFFFD');
}

describe('JsonStringFieldStream: basics', () => {
  it('extracts the example from pieces that split keys, values and escapes', () => {
    const r = run(['{"te', 'xt": "Hel', 'lo th', 'ere.\\n \\u00e', '9', '"}']);
    expect(r.text).toBe('Hello there.\n é');
    expect(r.outputs).toEqual(['', 'Hel', 'lo th', 'ere.\n ', 'é', '']);
    expect(r.stream.done).toBe(true);
    expect(r.stream.failed).toBe(false);
  });

  it('emits text incrementally, before the rest of the JSON arrives', () => {
    const s = new JsonStringFieldStream();
    expect(s.push('{"text":"Hello')).toBe('Hello');
    expect(s.done).toBe(false);
    expect(s.push(' world')).toBe(' world');
    expect(s.push('"')).toBe('');
    expect(s.done).toBe(true);
  });

  it('is not done until the closing quote', () => {
    const s = new JsonStringFieldStream();
    s.push('{"text": "abc');
    expect(s.done).toBe(false);
    expect(s.failed).toBe(false);
  });

  it('handles an empty value', () => {
    const r = run(['{"text":""}']);
    expect(r.text).toBe('');
    expect(r.stream.done).toBe(true);
  });

  it('returns empty strings for empty pieces', () => {
    const s = new JsonStringFieldStream();
    expect(s.push('')).toBe('');
    s.push('{"text":"a');
    expect(s.push('')).toBe('');
    expect(s.push('b"')).toBe('b');
  });

  it('uses a custom field name', () => {
    const r = run(['{"text":"no","say":"yes"}'], 'say');
    expect(r.text).toBe('yes');
    expect(r.stream.done).toBe(true);
  });

  it('ignores everything after done', () => {
    const s = new JsonStringFieldStream();
    expect(s.push('{"text":"hi"')).toBe('hi');
    expect(s.done).toBe(true);
    expect(s.push(', "text": "again"}')).toBe('');
    expect(s.push('garbage {{{')).toBe('');
    expect(s.done).toBe(true);
    expect(s.failed).toBe(false);
  });

  it('tolerates whitespace around tokens', () => {
    const r = run([' \n\t{ \r\n "text" \t :\n  "ok"  \n}\n ']);
    expect(r.text).toBe('ok');
    expect(r.stream.done).toBe(true);
  });
});

describe('JsonStringFieldStream: escapes', () => {
  it('decodes all simple escapes', () => {
    const r = run(['{"text":"\\" \\\\ \\/ \\b \\f \\n \\r \\t"}']);
    expect(r.text).toBe('" \\ / \b \f \n \r \t');
  });

  it('decodes \\u escapes in either case', () => {
    const r = run(['{"text":"\\u0041\\u00e9\\u00E9\\u20AC"}']);
    expect(r.text).toBe('Aéé€');
  });

  it('decodes escapes split at every position', () => {
    const json = '{"text":"a\\"b\\\\c\\u00e9d\\ud83d\\ude00e\\n"}';
    const expected = 'a"b\\céd😀e\n';
    for (let cut = 0; cut <= json.length; cut++) {
      const r = run([json.slice(0, cut), json.slice(cut)]);
      expect(r.text, `cut at ${cut}`).toBe(expected);
      expect(r.stream.done).toBe(true);
    }
    expect(run(unitPieces(json)).text).toBe(expected);
  });

  it('holds a piece ending in a backslash until the escape completes', () => {
    const s = new JsonStringFieldStream();
    expect(s.push('{"text":"a\\')).toBe('a');
    expect(s.push('n')).toBe('\n');
  });

  it('holds a partial \\u escape until its four digits arrive', () => {
    const s = new JsonStringFieldStream();
    expect(s.push('{"text":"x\\u00')).toBe('x');
    expect(s.push('e')).toBe('');
    expect(s.push('9y')).toBe('éy');
  });

  it('joins a surrogate pair written as two \\u escapes, never emitting half of it', () => {
    const s = new JsonStringFieldStream();
    expect(s.push('{"text":"a\\ud83d')).toBe('a');
    expect(s.push('\\ude')).toBe('');
    expect(s.push('00b"}')).toBe('😀b');
  });

  it('replaces an unpaired high surrogate escape with U+FFFD', () => {
    expect(run(['{"text":"a\\ud83db"}']).text).toBe('a\uFFFDb');
    expect(run(['{"text":"a\\ud83d"}']).text).toBe('a\uFFFD');
    expect(run(['{"text":"\\ud83d\\ud83d\\ude00"}']).text).toBe('\uFFFD😀');
    expect(run(['{"text":"\\ud83d\\n"}']).text).toBe('\uFFFD\n');
  });

  it('replaces an unpaired low surrogate escape with U+FFFD', () => {
    expect(run(['{"text":"a\\ude00b"}']).text).toBe('a\uFFFDb');
  });

  it('fails on an invalid escape, keeping what was decoded before it', () => {
    const r = run(['{"text":"ab\\x', 'cd"}']);
    expect(r.outputs).toEqual(['ab', '']);
    expect(r.stream.failed).toBe(true);
    expect(r.stream.done).toBe(false);
  });

  it('fails on a bad hex digit in \\u', () => {
    const r = run(['{"text":"\\u00g0"}']);
    expect(r.text).toBe('');
    expect(r.stream.failed).toBe(true);
  });
});

describe('JsonStringFieldStream: raw non-ASCII', () => {
  it('passes raw non-ASCII text through', () => {
    expect(run(['{"text":"héllo ✓ 日本 😀"}']).text).toBe('héllo ✓ 日本 😀');
  });

  it('keeps a raw surrogate pair whole when split between pieces', () => {
    const emoji = '😀';
    const s = new JsonStringFieldStream();
    expect(s.push(`{"text":"a${emoji[0] ?? ''}`)).toBe('a');
    expect(s.push(`${emoji[1] ?? ''}b"}`)).toBe(`${emoji}b`);
  });

  it('replaces raw lone surrogates with U+FFFD', () => {
    expect(run(['{"text":"a\uD83Db"}']).text).toBe('a\uFFFDb');
    expect(run(['{"text":"a\uDE00b"}']).text).toBe('a\uFFFDb');
  });

  it('passes raw control characters through rather than failing', () => {
    const r = run(['{"text":"line1\nline2"}']);
    expect(r.text).toBe('line1\nline2');
    expect(r.stream.done).toBe(true);
  });
});

describe('JsonStringFieldStream: skipping other keys', () => {
  it('skips values of every kind before the field', () => {
    const json =
      '{"a":"x\\"}]{[\\\\","b":-12.5e+3,"c":true,"d":false,"e":null,' +
      '"f":{"g":["}", "]", "\\"", {"text":"nested"}], "h":{}},"i":[],"j":[[1,[2]],{"k":0}],' +
      '"text":"found"}';
    const r = run([json]);
    expect(r.text).toBe('found');
    expect(r.stream.done).toBe(true);
    expect(run(unitPieces(json)).text).toBe('found');
  });

  it('does not take a nested "text" key', () => {
    const r = run(['{"outer":{"text":"nested"},"list":[{"text":"in array"}]}']);
    expect(r.text).toBe('');
    expect(r.stream.done).toBe(false);
    expect(r.stream.failed).toBe(false);
  });

  it('does not take a "text" string that is a value rather than a key', () => {
    const r = run(['{"k":"text","other":["text",":","x"]}']);
    expect(r.text).toBe('');
    expect(r.stream.failed).toBe(false);
  });

  it('compares decoded keys', () => {
    expect(run(['{"\\u0074ext":"escaped key"}']).text).toBe('escaped key');
    expect(run(['{"te\\u0078t":"too"}']).text).toBe('too');
    expect(run(['{"tex":"no","texts":"no","Text":"no","text":"yes"}']).text).toBe('yes');
  });

  it('matches keys containing surrogate pairs', () => {
    expect(run(['{"😀":"no","\\ud83d\\ude00":"yes"}'], '😀').text).toBe('no');
    expect(run(['{"\\ud83d\\ude00":"yes"}'], '😀').text).toBe('yes');
  });

  it('skips numbers of every shape', () => {
    for (const num of ['0', '-0', '7', '-42', '3.14', '1e9', '1E-9', '-0.5e+10', '123456789012345678901234']) {
      const r = run([`{"n":${num},"text":"ok"}`]);
      expect(r.text, num).toBe('ok');
    }
  });

  it('treats a non-string value for the field as absent', () => {
    for (const v of ['42', 'null', 'true', '{"text":"x"}', '["x"]']) {
      const r = run([`{"text":${v},"other":"y"}`]);
      expect(r.text, v).toBe('');
      expect(r.stream.failed, v).toBe(false);
      expect(r.stream.done, v).toBe(false);
    }
  });

  it('picks up a later string value after a non-string one', () => {
    expect(run(['{"text":1,"text":"second"}']).text).toBe('second');
  });

  it('returns nothing for an object without the field', () => {
    const r = run(['{"a":1,"b":"text"}']);
    expect(r.text).toBe('');
    expect(r.stream.done).toBe(false);
    expect(r.stream.failed).toBe(false);
    expect(run(['{}']).stream.failed).toBe(false);
    expect(run(['{ }  ']).stream.failed).toBe(false);
  });
});

describe('JsonStringFieldStream: malformed input', () => {
  const bad: readonly string[] = [
    '[{"text":"x"}]',
    '"text"',
    'text: hello',
    '```json\n{"text":"x"}',
    '42',
    'null',
    '{text:"x"}',
    "{'text':'x'}",
    '{"text" "x"}',
    '{"a":1 "text":"x"}',
    '{"a":1,}',
    '{,"text":"x"}',
    '{"a":[1,]}',
    '{"a":[1 2]}',
    '{"a":01}',
    '{"a":-}',
    '{"a":1.}',
    '{"a":.5}',
    '{"a":1e}',
    '{"a":+1}',
    '{"a":tru}',
    '{"a":nul,"text":"x"}',
    '{"a":truex}',
    '{"a":{]}',
    '{"a":[}',
    '{"a":"\\q"}',
    '{"a":"\\u12"}',
    '{}x',
    '{"a":1}}',
  ];

  it.each(bad)('fails without throwing on %j', (json) => {
    const r = run([json]);
    expect(r.stream.failed).toBe(true);
    expect(r.text).toBe('');
    expect(r.stream.push('"text":"later"}')).toBe('');
    expect(r.stream.failed).toBe(true);
  });

  it('fails the same way when malformed input arrives character by character', () => {
    for (const json of bad) {
      const r = run(unitPieces(json));
      expect(r.stream.failed, json).toBe(true);
      expect(r.text, json).toBe('');
    }
  });

  it('neither fails nor finishes on no input', () => {
    const s = new JsonStringFieldStream();
    expect(s.push('')).toBe('');
    expect(s.push('  ')).toBe('');
    expect(s.failed).toBe(false);
    expect(s.done).toBe(false);
  });
});

// ---------- Properties ----------

const keyArb = fc.string({ unit: 'binary', maxLength: 8 });
const otherEntriesArb = fc.uniqueArray(fc.tuple(keyArb.filter((k) => k !== 'text'), fc.jsonValue({ maxDepth: 3 })), {
  maxLength: 6,
  selector: ([k]) => k,
});
const spacingArb = fc.constantFrom<undefined | number | string>(undefined, 0, 1, 2, 4, '\t', ' \n');
const cutsArb = fc.array(fc.nat(), { maxLength: 30 });

function withField(entries: readonly (readonly [string, unknown])[], position: number, value: unknown): object {
  const all: (readonly [string, unknown])[] = [...entries];
  all.splice(position % (all.length + 1), 0, ['text', value]);
  return Object.fromEntries(all);
}

describe('JsonStringFieldStream: properties', () => {
  it('reassembles any full-Unicode text from any split of any formatting', () => {
    fc.assert(
      fc.property(
        otherEntriesArb,
        fc.nat(),
        fc.string({ unit: 'binary', maxLength: 60 }),
        spacingArb,
        cutsArb,
        (entries, position, text, spacing, cuts) => {
          const json = JSON.stringify(withField(entries, position, text), null, spacing);
          const r = run(splitAt(json, cuts));
          expect(r.text).toBe(text);
          expect(r.stream.done).toBe(true);
          expect(r.stream.failed).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('turns lone surrogates into U+FFFD and keeps everything else', () => {
    const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u));
    fc.assert(
      fc.property(
        otherEntriesArb,
        fc.nat(),
        fc.string({ unit: fc.oneof(anyUnit, fc.constantFrom('\uD83D', '\uDE00', '\uD83D\uDE00')), maxLength: 40 }),
        cutsArb,
        (entries, position, text, cuts) => {
          const json = JSON.stringify(withField(entries, position, text));
          expect(run(splitAt(json, cuts)).text).toBe(wellFormed(text));
          // Raw (unescaped) lone surrogates in the JSON text take the same path.
          const raw = `{"text":"${text.replace(/["\\]/g, '\\$&')}"}`;
          expect(run(splitAt(raw, cuts)).text).toBe(wellFormed(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('emits each character no later than the piece that completes it', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), cutsArb, (text, cuts) => {
        const json = JSON.stringify({ text });
        const pieces = splitAt(json, cuts);
        const s = new JsonStringFieldStream();
        let fed = '';
        let got = '';
        for (const p of pieces) {
          fed += p;
          got += s.push(p);
          // Everything decodable from the prefix so far has been handed out.
          expect(got).toBe(decodablePrefix(fed));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('returns nothing, without failing, for objects lacking the field', () => {
    fc.assert(
      fc.property(otherEntriesArb, spacingArb, cutsArb, (entries, spacing, cuts) => {
        const json = JSON.stringify(Object.fromEntries(entries), null, spacing);
        const r = run(splitAt(json, cuts));
        expect(r.text).toBe('');
        expect(r.stream.done).toBe(false);
        expect(r.stream.failed).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary input split arbitrarily', () => {
    const jsonish = fc.string({
      unit: fc.oneof(fc.constantFrom(...'{}[]":,\\ntrufalse0123456789.-+eE u'.split('')), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
      maxLength: 80,
    });
    fc.assert(
      fc.property(fc.oneof(jsonish, jsonish.map((s) => `{"text":"${s}`)), cutsArb, (input, cuts) => {
        const s = new JsonStringFieldStream();
        for (const p of splitAt(input, cuts)) {
          const out = s.push(p);
          expect(typeof out).toBe('string');
          if (s.failed) expect(s.push('x')).toBe('');
        }
        expect(s.done && s.failed).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

/**
 * Reference for the incremental property, for `{"text":"…` prefixes as produced
 * by JSON.stringify: decode the complete tokens of the value, leaving out a
 * trailing unfinished escape, and a high surrogate until the value closes.
 */
function decodablePrefix(prefix: string): string {
  const start = '{"text":"';
  const body = prefix.slice(start.length);
  const token = /\\u[0-9a-fA-F]{4}|\\["\\/bfnrt]|[^"\\]/y;
  let pos = 0;
  for (let m = token.exec(body); m !== null; m = token.exec(body)) pos += m[0].length;
  const decoded = JSON.parse(`"${body.slice(0, pos)}"`) as string;
  const closed = body[pos] === '"';
  return !closed && /[\uD800-\uDBFF]$/.test(decoded) ? decoded.slice(0, -1) : decoded;
}
