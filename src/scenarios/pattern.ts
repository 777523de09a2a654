/**
 * Text patterns of scenario files: `/body/flags` is a regular expression,
 * anything else is plain text. One parser, so the schema rejects exactly what
 * the runner could not use.
 */

const SLASHED = /^\/(.+)\/([dgimsuvy]*)$/s;

/** The regular expression of a `/body/flags` pattern, or undefined for plain text. Throws on a bad expression. */
export function slashedRegExp(pattern: string, extraFlags = ''): RegExp | undefined {
  const match = SLASHED.exec(pattern);
  if (!match) return undefined;
  const [, body = '', flags = ''] = match;
  return new RegExp(body, uniqueFlags(flags + extraFlags));
}

/** `matches:` of an expectation: `/body/flags`, or a bare expression without flags. */
export function expressionOf(pattern: string): RegExp {
  return slashedRegExp(pattern) ?? new RegExp(pattern);
}

/** `when:` of a model rule: a case-insensitive substring, or a `/regex/` that is case-insensitive too. */
export function textMatcher(pattern: string): (text: string) => boolean {
  const regex = slashedRegExp(pattern, 'i');
  if (regex) return (text) => regex.test(text);
  const needle = pattern.toLowerCase();
  return (text) => text.toLowerCase().includes(needle);
}

/** Undefined when the pattern compiles, else why not. */
export function patternProblem(compile: () => unknown): string | undefined {
  try {
    compile();
    return undefined;
  } catch (error) {
    return `not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function uniqueFlags(flags: string): string {
  // The g and y flags make test() stateful across calls, which a matcher must not be.
  return [...new Set(flags.replace(/[gy]/g, ''))].join('');
}
