/**
 * One cheap request at startup (GET /models) that tells a person at once whether the LLM is
 * reachable, accepts the key and offers the model, instead of the first caller finding out.
 */
import type { Readable } from 'node:stream';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { Logger } from '../logger.js';
import { redactUrlCredentials } from '../logger.js';
import { describeNetworkError } from '../net-errors.js';
import { createHttpFetch } from '../net/http-fetch.js';
import { loggableLlmError, shortErrorMessage } from './llm-errors.js';

export type LlmCheck =
  /** `modelListed` is undefined when the list is empty: some servers list nothing. */
  | { outcome: 'ok'; models: string[]; modelListed: boolean | undefined }
  | { outcome: 'unreachable'; reason: string }
  | { outcome: 'key-refused'; status: number }
  /** Nothing at GET /models (404): most often an address without its /v1. */
  | { outcome: 'not-found'; status: 404 }
  /** The server has no GET /models (405): nothing learned. */
  | { outcome: 'no-model-list'; status: number }
  | { outcome: 'inconclusive'; reason: string };

export interface LlmCheckOptions {
  apiKey: string | undefined;
  baseURL: string | undefined;
  model: string;
  timeoutMs?: number;
}

/** A model list beyond this is not read: the check is not worth the memory. */
const MODEL_LIST_LIMIT = 8 * 1024 * 1024;

/** Asks the endpoint for its models, as the LLM adapter would ask (same SDK, HTTP client, key). Never throws. */
export async function checkLlm(options: LlmCheckOptions): Promise<LlmCheck> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const http = createHttpFetch();
  try {
    const client = new OpenAI({
      // As in llm.ts: self-hosted endpoints need no key, and null keeps the SDK from reading the environment.
      apiKey: options.apiKey ?? 'not-needed',
      baseURL: options.baseURL ?? null,
      maxRetries: 0,
      timeout: timeoutMs,
      fetch: http.fetch,
    });
    const response = await client.models.list().asResponse();
    const raw = http.rawBody(response);
    if (!raw) return { outcome: 'inconclusive', reason: 'the model list came without a body' };
    const text = await readWithin(raw, timeoutMs);
    return modelListCheck(text, options.model);
  } catch (error) {
    return failedCheck(error, timeoutMs);
  } finally {
    http.close();
  }
}

function modelListCheck(text: string, model: string): LlmCheck {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { outcome: 'inconclusive', reason: 'GET /models did not answer with JSON: is this the API address (often ending in /v1)?' };
  }
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return { outcome: 'inconclusive', reason: 'GET /models answered without a list of models' };
  const models = data.flatMap((entry: unknown) => {
    const id = (entry as { id?: unknown } | null)?.id;
    return typeof id === 'string' ? [id] : [];
  });
  // Ollama lists "llama3.1:latest" and serves it as "llama3.1" too.
  const modelListed = models.length === 0 ? undefined : models.some((id) => id === model || id === `${model}:latest`);
  return { outcome: 'ok', models, modelListed };
}

function failedCheck(error: unknown, timeoutMs: number): LlmCheck {
  if (error instanceof APIConnectionTimeoutError || error instanceof BodyTimeoutError) {
    return { outcome: 'unreachable', reason: `no answer within ${timeoutMs / 1000} s` };
  }
  if (error instanceof APIConnectionError) return { outcome: 'unreachable', reason: describeNetworkError(error) };
  if (error instanceof APIError && typeof error.status === 'number') {
    if (error.status === 401 || error.status === 403) return { outcome: 'key-refused', status: error.status };
    if (error.status === 404) return { outcome: 'not-found', status: 404 };
    if (error.status === 405) return { outcome: 'no-model-list', status: error.status };
    return { outcome: 'inconclusive', reason: shortErrorMessage(error) };
  }
  return { outcome: 'inconclusive', reason: shortErrorMessage(error) };
}

class BodyTimeoutError extends Error {}

/** The body as text, cut off at MODEL_LIST_LIMIT; the SDK's timeout covers only the answer's head. */
function readWithin(raw: Readable, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const timer = setTimeout(() => {
      raw.destroy();
      reject(new BodyTimeoutError());
    }, timeoutMs);
    raw.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length <= MODEL_LIST_LIMIT) chunks.push(chunk);
    });
    raw.on('end', () => {
      clearTimeout(timer);
      if (length > MODEL_LIST_LIMIT) reject(new Error(`the model list is larger than ${MODEL_LIST_LIMIT} bytes`));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    raw.on('error', (error: Error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

export interface LlmCheckReport {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
}

/** What a person should read about the check: the endpoint, what is wrong, and which variable to fix. */
export function describeLlmCheck(check: LlmCheck, target: { endpoint: string; model: string; baseUrlSet: boolean }): LlmCheckReport {
  const at = `the LLM at ${redactUrlCredentials(target.endpoint)}`;
  switch (check.outcome) {
    case 'ok':
      if (check.modelListed === false) {
        const some = check.models.slice(0, 5).join(', ') + (check.models.length > 5 ? ', …' : '');
        return {
          level: 'warn',
          message:
            `LLM_MODEL ${target.model} is not among the ${check.models.length} models ${at} offers (${some}): ` +
            'check LLM_MODEL (some servers accept names they do not list)',
        };
      }
      return { level: 'info', message: `${at} answers${check.modelListed ? ` and offers ${target.model}` : ''}` };
    case 'unreachable':
      return {
        level: 'error',
        message: `${at} cannot be reached: ${check.reason}; ${
          target.baseUrlSet ? 'check OPENAI_BASE_URL' : 'check the network, or set OPENAI_BASE_URL'
        }`,
      };
    case 'key-refused':
      return { level: 'error', message: `${at} refused the API key (HTTP ${check.status}): check OPENAI_API_KEY` };
    case 'not-found':
      return { level: 'error', message: notFoundAdvice(target) };
    case 'no-model-list':
      return { level: 'debug', message: `${at} has no model list (HTTP ${check.status}): the startup check learned nothing` };
    case 'inconclusive':
      return { level: 'warn', message: `checking ${at} was inconclusive: ${check.reason}` };
  }
}

/**
 * The usual cause of a 404 is an address without its version (`http://host:11434` for Ollama's
 * `http://host:11434/v1`): every request of every call would fail the same way.
 */
function notFoundAdvice(target: { endpoint: string; baseUrlSet: boolean }): string {
  const endpoint = redactUrlCredentials(target.endpoint).replace(/\/+$/, '');
  const named = target.baseUrlSet ? `OPENAI_BASE_URL ${endpoint}` : `the LLM at ${endpoint}`;
  const versioned = /\/v\d+[a-z]*$/i.test(endpoint);
  if (!versioned) return `${named} answered 404 for /models: does it need /v1 at the end (${endpoint}/v1)? Every call will fail until it is right`;
  return `${named} answered 404 for /models: nothing was found at that address; check OPENAI_BASE_URL (the API's address, the part before /chat/completions)`;
}

/**
 * Runs the check in the background after startup and logs the outcome. It never throws, never
 * rejects and holds nothing open, so it can neither stop Hotline nor delay a call.
 */
/** The model Hotline was configured with (config.ts' `llm`). */
export interface ConfiguredLlm {
  readonly llm: { readonly apiKey?: string | undefined; readonly baseURL?: string | undefined; readonly model: string };
}

export async function checkLlmAtStartup(config: ConfiguredLlm, logger: Logger, endpoint: string): Promise<void> {
  try {
    const check = await checkLlm({ apiKey: config.llm.apiKey, baseURL: config.llm.baseURL, model: config.llm.model });
    const report = describeLlmCheck(check, { endpoint, model: config.llm.model, baseUrlSet: Boolean(config.llm.baseURL) });
    logger[report.level]({ llmCheck: check.outcome }, report.message);
  } catch (error) {
    logger.debug({ err: loggableLlmError(error) }, 'the LLM startup check failed');
  }
}
