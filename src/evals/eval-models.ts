/**
 * Which models play an eval: the agent (Hotline's own LLM settings), the
 * simulated caller and the judge (their own EVAL_CALLER_* / EVAL_JUDGE_*
 * settings, each defaulting to the agent's). With no LLM configured at all,
 * each is the built-in scripted model, played from the eval's `scripted:`.
 */
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { PriceTable } from '../llm/prices.js';
import { readUsage } from '../llm/usage.js';

export interface ModelEndpoint {
  readonly baseURL: string | undefined;
  readonly apiKey: string;
  readonly model: string;
  readonly temperature: number | undefined;
}

/** A role played by a configured model, or by the scripted one. */
export type RoleModel = { readonly kind: 'remote'; readonly endpoint: ModelEndpoint } | { readonly kind: 'scripted' };

export interface EvalModels {
  readonly agent: RoleModel;
  readonly caller: RoleModel;
  readonly judge: RoleModel;
  /** The agent's LLM settings as Hotline reads them (empty when scripted). */
  readonly agentEnv: Readonly<Record<string, string>>;
}

const AGENT_VARIABLES = ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'LLM_MODEL', 'LLM_TEMPERATURE', 'LLM_TIMEOUT_MS', 'LLM_PRICES_FILE'] as const;
const DEFAULT_MODEL = 'gpt-4o-mini';

/** A model said no, could not be reached, or answered with something unreadable: the run could not be graded. */
export class EvalModelError extends Error {
  constructor(
    readonly role: 'caller' | 'judge',
    message: string,
  ) {
    super(`the ${role} model: ${message}`);
    this.name = 'EvalModelError';
  }
}

export function evalModels(env: Readonly<Record<string, string | undefined>>): EvalModels {
  const agentConfigured = Boolean(env.OPENAI_API_KEY || env.OPENAI_BASE_URL);
  const agentEndpoint: ModelEndpoint = {
    baseURL: env.OPENAI_BASE_URL || undefined,
    apiKey: env.OPENAI_API_KEY || 'none',
    model: env.LLM_MODEL || DEFAULT_MODEL,
    temperature: numberOr(env.LLM_TEMPERATURE),
  };
  const role = (prefix: 'EVAL_CALLER' | 'EVAL_JUDGE', temperature: number | undefined): RoleModel => {
    const own = Boolean(env[`${prefix}_API_KEY`] || env[`${prefix}_BASE_URL`]);
    if (!own && !agentConfigured) return { kind: 'scripted' };
    return {
      kind: 'remote',
      endpoint: {
        baseURL: env[`${prefix}_BASE_URL`] || (own ? undefined : agentEndpoint.baseURL),
        apiKey: env[`${prefix}_API_KEY`] || (own ? 'none' : agentEndpoint.apiKey),
        model: env[`${prefix}_MODEL`] || agentEndpoint.model,
        temperature: numberOr(env[`${prefix}_TEMPERATURE`]) ?? temperature,
      },
    };
  };
  const agentEnv: Record<string, string> = {};
  if (agentConfigured) for (const name of AGENT_VARIABLES) if (env[name]) agentEnv[name] = env[name];
  return {
    agent: agentConfigured ? { kind: 'remote', endpoint: agentEndpoint } : { kind: 'scripted' },
    // A caller that varies like people do; a judge that does not.
    caller: role('EVAL_CALLER', agentEndpoint.temperature),
    judge: role('EVAL_JUDGE', 0),
    agentEnv,
  };
}

/** One role's model in one run: asks, and adds up what its answers cost. */
export class RoleClient {
  private readonly client: OpenAI;
  /** USD, at the price table's prices; what a model without a price cost is not known. */
  costUsd = 0;
  unpriced = false;

  constructor(
    readonly role: 'caller' | 'judge',
    readonly endpoint: ModelEndpoint,
    private readonly prices: PriceTable,
  ) {
    // Nothing from the environment: the organisation and project headers too come only from the settings given.
    this.client = new OpenAI({ apiKey: endpoint.apiKey, baseURL: endpoint.baseURL ?? null, organization: null, project: null, maxRetries: 2, timeout: 60_000 });
  }

  async ask(body: Omit<ChatCompletionCreateParamsNonStreaming, 'model'>, signal?: AbortSignal): Promise<ChatCompletion> {
    const { model, temperature } = this.endpoint;
    let answer: ChatCompletion;
    try {
      answer = await this.client.chat.completions.create(
        { model, ...(temperature === undefined ? {} : { temperature }), ...body, stream: false },
        signal ? { signal } : {},
      );
    } catch (error) {
      throw new EvalModelError(this.role, error instanceof Error ? error.message : String(error));
    }
    const usage = readUsage(answer);
    const cost = usage ? this.prices.costOf(answer.model || model, usage) : undefined;
    if (cost === undefined) this.unpriced = true;
    else this.costUsd += cost;
    return answer;
  }
}

function numberOr(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}
