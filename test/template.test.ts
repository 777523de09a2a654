import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { compileTemplate, TemplateSyntaxError } from '../src/prompts/template.js';

function syntaxIssues(source: string): string[] {
  try {
    compileTemplate(source);
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return error.issues.map((i) => `${i.line}:${i.column} ${i.message}`);
    throw error;
  }
  throw new Error('expected a syntax error');
}

describe('parsing', () => {
  test('splits literals and placeholders once, with positions', () => {
    const template = compileTemplate('Hi {{name}},\nabout {{ topic | your order }}!');
    expect(template.parts).toEqual([
      { kind: 'literal', text: 'Hi ' },
      { kind: 'placeholder', name: 'name', defaultValue: undefined, line: 1, column: 4 },
      { kind: 'literal', text: ',\nabout ' },
      { kind: 'placeholder', name: 'topic', defaultValue: 'your order', line: 2, column: 7 },
      { kind: 'literal', text: '!' },
    ]);
    expect(template.placeholders).toEqual(['name', 'topic']);
  });

  test('lists each placeholder once, in order of first use', () => {
    expect(compileTemplate('{{b}} {{a|x}} {{b|y}} {{c.d-e_f}}').placeholders).toEqual(['b', 'a', 'c.d-e_f']);
  });

  test('lone braces and "}}" without "{{" are text', () => {
    const text = 'a } b }} c { d';
    expect(compileTemplate(text).render({})).toBe(text);
  });

  test('firstLine shifts reported lines', () => {
    expect(compileTemplate('x\n{{a}}', { firstLine: 10 }).parts[1]).toMatchObject({ line: 11, column: 1 });
  });
});

describe('rendering', () => {
  const template = compileTemplate('Hi {{name|there}}, about {{topic}}.');

  test('uses values, then defaults', () => {
    expect(template.render({ name: 'Anna', topic: 'your cake' })).toBe('Hi Anna, about your cake.');
    expect(template.render({ topic: 'your cake' })).toBe('Hi there, about your cake.');
  });

  test('an empty or blank value counts as missing', () => {
    expect(template.render({ name: '', topic: 'x' })).toBe('Hi there, about x.');
    expect(template.render({ name: '  ', topic: 'x' })).toBe('Hi there, about x.');
    expect(template.render({ name: undefined, topic: 'x' })).toBe('Hi there, about x.');
  });

  test('an empty default renders nothing and is not reported', () => {
    const missing: string[] = [];
    expect(compileTemplate('a{{notes|}}b').render({}, (n) => missing.push(n))).toBe('ab');
    expect(missing).toEqual([]);
  });

  test('whitespace around the name, the bar and the default is ignored', () => {
    expect(compileTemplate('{{  name  }}/{{ name |  x y  }}').render({ name: 'N' })).toBe('N/N');
    expect(compileTemplate('{{ other |  x y  }}').render({})).toBe('x y');
  });

  test('the default is raw text up to "}}"', () => {
    expect(compileTemplate('{{a|x | y } z}}').render({})).toBe('x | y } z');
  });

  test('exact names win; a case-insensitive match is the fallback', () => {
    const t = compileTemplate('{{Name}}');
    expect(t.render({ Name: 'exact', name: 'folded' })).toBe('exact');
    expect(t.render({ name: 'folded' })).toBe('folded');
    expect(t.render({ NAME: 'upper' })).toBe('upper');
    expect(t.render({ Name: '', NAME: 'upper' })).toBe('upper');
  });

  test('a missing value without default renders empty and is reported', () => {
    const missing: string[] = [];
    expect(template.render({ name: 'Anna' }, (n) => missing.push(n))).toBe('Hi Anna, about .');
    expect(missing).toEqual(['topic']);
    expect(template.render({})).toBe('Hi there, about .');
  });

  test('variables are not themselves templates', () => {
    expect(template.render({ topic: '{{name}}' })).toBe('Hi there, about {{name}}.');
  });

  test('wouldLeaveEmpty: only placeholders without value and default count', () => {
    expect(template.wouldLeaveEmpty({})).toBe(true);
    expect(template.wouldLeaveEmpty({ topic: ' ' })).toBe(true);
    expect(template.wouldLeaveEmpty({ TOPIC: 'x' })).toBe(false);
    expect(compileTemplate('{{a|}} {{b|x}} text').wouldLeaveEmpty({})).toBe(false);
  });
});

describe('syntax errors', () => {
  test('an unclosed "{{"', () => {
    expect(syntaxIssues('Hi {{name')).toEqual(['1:4 unclosed "{{": a placeholder needs "}}" on the same line']);
    expect(syntaxIssues('Hi {{name\n}}')).toHaveLength(1);
    expect(syntaxIssues('{{a|x {{b}}')[0]).toMatch(/^1:1 unclosed/);
  });

  test('an empty or invalid name', () => {
    expect(syntaxIssues('{{}}')).toEqual(['1:1 placeholder without a name']);
    expect(syntaxIssues('{{ |x}}')).toEqual(['1:1 placeholder without a name']);
    expect(syntaxIssues('ok\n  {{1abc}}')[0]).toMatch(/^2:3 invalid placeholder name "1abc"/);
    expect(syntaxIssues('{{first name}}')[0]).toMatch(/invalid placeholder name "first name"/);
    expect(syntaxIssues('{{{name}}}')[0]).toMatch(/invalid placeholder name "\{name"/);
  });

  test('every error is reported, not just the first', () => {
    const error = (() => {
      try {
        compileTemplate('{{}} and {{a b}} and {{open');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(TemplateSyntaxError);
    expect((error as TemplateSyntaxError).issues).toHaveLength(3);
    expect((error as TemplateSyntaxError).code).toBe('template_syntax');
  });
});

test('a template without "{{" renders to itself', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('{{')),
      fc.dictionary(fc.string(), fc.string()),
      (text, vars) => {
        const template = compileTemplate(text);
        expect(template.render(vars)).toBe(text);
        expect(template.placeholders).toEqual([]);
      },
    ),
  );
});
