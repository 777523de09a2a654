import { z } from 'zod';
import { compileTemplate, Template, TemplateSyntaxError, type TemplatePart } from '../prompts/template.js';
import { envNames, expandEnv } from './env-refs.js';

/**
 * The `request:` of a tool file or of context.yaml: method, URL, headers,
 * query and JSON body, each string a `{{placeholder}}` template.
 *
 * `${ENV_NAME}` is expanded while the file is read, in the file's own text
 * only: the template is compiled first and only its literal parts are
 * expanded, so neither a secret that happens to contain `{{` nor a model's
 * argument that says `${SECRET}` is ever read as anything but text.
 */

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type Env = Readonly<Record<string, string | undefined>>;

/** A JSON body whose strings are templates; other values are sent as written. */
export type BodyTemplate =
  | { readonly kind: 'text'; readonly template: Template }
  | { readonly kind: 'value'; readonly value: null | number | boolean }
  | { readonly kind: 'list'; readonly items: readonly BodyTemplate[] }
  | { readonly kind: 'map'; readonly entries: readonly (readonly [string, BodyTemplate])[] };

/** The environment variables one file refers to; collected while its templates are expanded. */
class EnvUse {
  readonly names: string[] = [];
  readonly missing: string[] = [];

  constructor(readonly env: Env) {}

  expand(template: Template): Template {
    const parts = template.parts.map((part): TemplatePart => {
      if (part.kind !== 'literal') return part;
      for (const name of envNames(part.text)) if (!this.names.includes(name)) this.names.push(name);
      const { value, missing } = expandEnv(part.text, this.env);
      for (const name of missing) if (!this.missing.includes(name)) this.missing.push(name);
      return { kind: 'literal', text: value };
    });
    return new Template(Object.freeze(parts));
  }
}

function compileOrReport(text: string, ctx: z.RefinementCtx, path: PropertyKey[] = []): Template | undefined {
  try {
    return compileTemplate(text);
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    for (const issue of error.issues) ctx.addIssue({ code: 'custom', path, message: issue.message });
    return undefined;
  }
}

const LINE_BREAK = /[\r\n\0]/;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function compileBody(value: unknown, ctx: z.RefinementCtx, path: PropertyKey[]): BodyTemplate {
  if (typeof value === 'string') return { kind: 'text', template: compileOrReport(value, ctx, path) ?? new Template([]) };
  if (Array.isArray(value)) return { kind: 'list', items: value.map((item, i) => compileBody(item, ctx, [...path, i])) };
  if (typeof value === 'object' && value !== null) {
    return { kind: 'map', entries: Object.entries(value).map(([key, item]) => [key, compileBody(item, ctx, [...path, key])] as const) };
  }
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return { kind: 'value', value };
  ctx.addIssue({ code: 'custom', path, message: `${typeof value} is no JSON value` });
  return { kind: 'value', value: null };
}

function mapBody(body: BodyTemplate, map: (t: Template) => Template): BodyTemplate {
  switch (body.kind) {
    case 'text':
      return { kind: 'text', template: map(body.template) };
    case 'list':
      return { kind: 'list', items: body.items.map((item) => mapBody(item, map)) };
    case 'map':
      return { kind: 'map', entries: body.entries.map(([key, item]) => [key, mapBody(item, map)] as const) };
    case 'value':
      return body;
  }
}

// Numbers and booleans too: `X-Api-Version: 2` is a header a person writes without quotes.
const templateText = z
  .union([z.string(), z.number(), z.boolean()])
  .transform((value, ctx) => compileOrReport(String(value), ctx) ?? new Template([]));

/** The request as written, templates compiled, `${…}` not yet expanded. */
const RequestFileSchema = z
  .strictObject({
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(HTTP_METHODS, { error: `use ${HTTP_METHODS.slice(0, -1).join(', ')} or ${HTTP_METHODS.at(-1)}` }))
      .default('GET'),
    url: z
      .string()
      .min(1)
      .transform((value, ctx) => compileOrReport(value, ctx) ?? new Template([])),
    headers: z.record(z.string().regex(HEADER_NAME, 'not a valid header name'), templateText).default({}),
    query: z.record(z.string().min(1), templateText).default({}),
    body: z
      .unknown()
      .transform((value, ctx) => (value === null ? undefined : compileBody(value, ctx, [])))
      .optional(),
  })
  .superRefine((request, ctx) => {
    if (request.body !== undefined && request.method === 'GET') {
      const message = 'a GET request has no body: use POST, PUT, PATCH or DELETE, or send the values as query';
      ctx.addIssue({ code: 'custom', path: ['body'], message });
    }
  });

/**
 * The request schema for one reading of a file with `env`. Its output says
 * which variables the file needs and which of them are not set: such a file
 * is fine, its tool is just not offered.
 */
export function requestSchema(env: Env) {
  return RequestFileSchema.transform((written, ctx) => {
    const use = new EnvUse(env);
    const expand = (t: Template): Template => use.expand(t);
    const request = {
      method: written.method,
      url: expand(written.url),
      headers: Object.fromEntries(Object.entries(written.headers).map(([key, t]) => [key, expand(t)] as const)),
      query: Object.fromEntries(Object.entries(written.query).map(([key, t]) => [key, expand(t)] as const)),
      body: written.body === undefined ? undefined : mapBody(written.body, expand),
      needs: use.names,
      missingEnv: use.missing,
    };
    for (const [key, t] of Object.entries(request.headers)) {
      if (LINE_BREAK.test(literalText(t))) {
        const message = 'a header value cannot contain a line break (nor can the environment variables it uses)';
        ctx.addIssue({ code: 'custom', path: ['headers', key], message });
      }
    }
    // With a variable missing the URL is incomplete anyway; the tool is left out for that, not for this.
    if (use.missing.length === 0 && !isHttpUrl(request.url)) {
      const message = 'is not an http:// or https:// URL (with the environment variables it uses as they are set)';
      ctx.addIssue({ code: 'custom', path: ['url'], message });
    }
    return request;
  });
}

export type RequestSpec = z.output<ReturnType<typeof requestSchema>>;

function literalText(template: Template): string {
  return template.parts.map((p) => (p.kind === 'literal' ? p.text : (p.defaultValue ?? ''))).join('');
}

/**
 * The scheme, host and port the URL names before any placeholder: the business system every run
 * reaches, to which a connection can be opened ahead. Undefined when a placeholder is part of it.
 */
export function staticOrigin(url: Template): URL | undefined {
  const first = url.parts[0];
  if (first?.kind !== 'literal') return undefined;
  const authorityEnd = /^https?:\/\/[^/?#]*[/?#]/i.exec(first.text);
  if (!authorityEnd && url.parts.length > 1) return undefined;
  try {
    return new URL(new URL(authorityEnd ? authorityEnd[0] : first.text).origin);
  } catch {
    return undefined;
  }
}

/** Whether the URL is http(s) whatever its placeholders turn out to be. */
function isHttpUrl(url: Template): boolean {
  const sample = url.parts.map((p) => (p.kind === 'literal' ? p.text : 'x')).join('');
  try {
    const parsed = new URL(sample);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// rendering for one run
// ---------------------------------------------------------------------------------------------

export interface RenderedRequest {
  readonly method: HttpMethod;
  /** May carry secrets from the environment: never log it. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

export type RenderOutcome =
  | { readonly request: RenderedRequest }
  /** Placeholders with neither a value nor a default: nothing may be sent. */
  | { readonly missing: readonly string[] }
  /** A value that would change the request's shape (a line break in a header, a `..` in the path). */
  | { readonly refused: string };

/**
 * Values by name: the model's arguments first, then the call's variables.
 * Like prompt templates, a blank value counts as missing and a name that is
 * not found exactly is looked up ignoring case.
 */
class Values {
  private readonly text = new Map<string, string>();
  private folded: Map<string, string> | undefined;

  constructor(
    private readonly args: Readonly<Record<string, unknown>>,
    variables: Env,
  ) {
    for (const [name, value] of Object.entries(variables)) if (value !== undefined && value.trim() !== '') this.text.set(name, value);
    for (const [name, value] of Object.entries(args)) {
      const asText = argumentText(value);
      if (asText !== undefined) this.text.set(name, asText);
    }
  }

  get(name: string): string | undefined {
    const exact = this.text.get(name);
    if (exact !== undefined) return exact;
    if (this.folded === undefined) {
      this.folded = new Map();
      for (const [key, value] of this.text) if (!this.folded.has(key.toLowerCase())) this.folded.set(key.toLowerCase(), value);
    }
    return this.folded.get(name.toLowerCase());
  }

  /** The argument as the model gave it, for a body value that is one placeholder and nothing else. */
  raw(name: string): unknown {
    if (!Object.hasOwn(this.args, name)) return undefined;
    const value = this.args[name];
    return argumentText(value) === undefined ? undefined : value;
  }
}

function argumentText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

type Fill = (name: string, value: string) => string;

function fill(template: Template, values: Values, missing: Set<string>, encode: Fill = (_n, v) => v): string {
  let out = '';
  for (const part of template.parts) {
    if (part.kind === 'literal') {
      out += part.text;
      continue;
    }
    const value = values.get(part.name);
    if (value !== undefined) out += encode(part.name, value);
    else if (part.defaultValue !== undefined) out += part.defaultValue;
    else missing.add(part.name);
  }
  return out;
}

function fillBody(body: BodyTemplate, values: Values, missing: Set<string>): unknown {
  switch (body.kind) {
    case 'value':
      return body.value;
    case 'list':
      return body.items.map((item) => fillBody(item, values, missing));
    case 'map':
      return Object.fromEntries(body.entries.map(([key, item]) => [key, fillBody(item, values, missing)]));
    case 'text': {
      const [only] = body.template.parts;
      // A value that is one placeholder keeps the argument's JSON type: `count: "{{count}}"` sends 3, not "3".
      if (body.template.parts.length === 1 && only?.kind === 'placeholder') {
        const raw = values.raw(only.name);
        if (raw !== undefined) return raw;
      }
      return fill(body.template, values, missing);
    }
  }
}

class Refused extends Error {}

/** The request for one run; nothing is sent unless this gives a request. */
export function renderRequest(request: RequestSpec, args: Readonly<Record<string, unknown>>, variables: Env): RenderOutcome {
  const values = new Values(args, variables);
  const missing = new Set<string>();
  try {
    const urlText = fill(request.url, values, missing, (name, value) => {
      // WHATWG URLs treat %2E%2E like "..": encoding cannot keep a dot segment from walking up the path, refusing it can.
      if (value === '.' || value === '..') throw new Refused(`${name} cannot be "${value}"`);
      return encodeURIComponent(value);
    });
    const query = Object.entries(request.query).map(([key, t]) => [key, fill(t, values, missing)] as const);
    const headers: Record<string, string> = {};
    for (const [key, t] of Object.entries(request.headers)) {
      const value = fill(t, values, missing);
      if (LINE_BREAK.test(value)) throw new Refused(`the value for header ${key} contains a line break`);
      headers[key] = value;
    }
    const body = request.body === undefined ? undefined : JSON.stringify(fillBody(request.body, values, missing));
    if (missing.size > 0) return { missing: [...missing] };
    let url: URL;
    try {
      url = new URL(urlText);
    } catch {
      throw new Refused(`the values make no valid URL`);
    }
    for (const [key, value] of query) url.searchParams.append(key, value);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    return { request: { method: request.method, url: url.href, headers, body } };
  } catch (error) {
    if (error instanceof Refused) return { refused: error.message };
    throw error;
  }
}
