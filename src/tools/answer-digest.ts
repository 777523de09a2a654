import { fieldsOf, isRecord, type Mapped } from './context-fields.js';
import { pick } from './json-path.js';
import { resultText } from './result-text.js';

/**
 * What Hotline needs of a business system's answer, made from its raw bytes:
 * the part the model reads, an error's excerpt, or a caller's record. Pure,
 * so that a big answer can be digested on a thread of its own (answer-thread.ts)
 * and a small one where it is.
 */
export type DigestRequest =
  /** The text at `path` of a JSON answer (the whole answer without one), or a text answer as it is. */
  | { readonly kind: 'result'; readonly body: Uint8Array; readonly cut: boolean; readonly path?: readonly string[]; readonly limit: number }
  /** A failed answer's body as one line: what it says about why. */
  | { readonly kind: 'excerpt'; readonly body: Uint8Array; readonly cut: boolean; readonly limit: number }
  /** The caller-context variables of a JSON answer's record at `path`. */
  | {
      readonly kind: 'record';
      readonly body: Uint8Array;
      readonly cut: boolean;
      readonly path?: readonly string[];
      readonly mapping?: readonly Mapped[];
      /** Characters of each value, at most. */
      readonly limit: number;
    };

export interface TextDigest {
  /** At most the request's `limit` characters of it. */
  readonly text: string;
  /** The text went on past `limit` (or the body past the reading cap). */
  readonly cut: boolean;
  /** The answer was JSON. */
  readonly json: boolean;
  /** False when a JSON answer has nothing at `path`. */
  readonly found: boolean;
}

export interface RecordDigest {
  readonly fields: Record<string, string>;
}

export type Digest<R extends DigestRequest> = R extends { kind: 'record' } ? RecordDigest : TextDigest;

export function digest<R extends DigestRequest>(request: R): Digest<R>;
export function digest(request: DigestRequest): TextDigest | RecordDigest {
  // Lenient decoding: a prefix may end inside a character, and a business system's bad byte is no reason to fail.
  const text = new TextDecoder().decode(request.body);
  const parsed = request.cut ? undefined : parseJson(text);
  switch (request.kind) {
    case 'record': {
      const record = parsed === undefined ? undefined : request.path === undefined ? parsed.value : pick(parsed.value, request.path);
      return { fields: isRecord(record) ? fieldsOf(record, request.mapping, request.limit) : {} };
    }
    case 'excerpt': {
      // Collapsed before it is cut: a pretty-printed body says little in its first hundred characters.
      const line = (parsed ? resultText(parsed.value) : text).replace(/\s+/g, ' ').trim();
      return limited(line, request.limit, request.cut, parsed !== undefined, true);
    }
    case 'result': {
      if (parsed === undefined) return limited(text, request.limit, request.cut, false, true);
      const value = request.path === undefined ? parsed.value : pick(parsed.value, request.path);
      if (value === undefined) return { text: '', cut: false, json: true, found: false };
      return limited(resultText(value), request.limit, false, true, true);
    }
  }
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    // Not JSON, whatever the content type claims: the text is still worth reading.
    return undefined;
  }
}

function limited(text: string, limit: number, cut: boolean, json: boolean, found: boolean): TextDigest {
  if (text.length <= limit) return { text, cut, json, found };
  return { text: text.slice(0, limit), cut: true, json, found };
}
