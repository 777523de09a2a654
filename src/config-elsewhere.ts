/**
 * The variables read outside config.ts's schema, described as the schema's own are (src/config-sections.ts),
 * so that the configuration reference lists every variable the code reads: those of the command-line tools
 * and npm run eval, the shop the shipped example tools call, and Node's own. Nothing here is parsed or
 * checked at startup; `readBy` names who does read each one.
 */
import type { VariableDoc } from './config-sections.js';

export interface ElsewhereDoc extends VariableDoc {
  /** Who reads it: a file of this repository, or Node. */
  readBy: string;
}

const evalRole = (prefix: 'EVAL_CALLER' | 'EVAL_JUDGE', role: string, defaults: { model: string; temperature: string }) =>
  ({
    [`${prefix}_BASE_URL`]: {
      section: 'eval',
      doc: `The ${role}'s endpoint.`,
      readBy: 'src/evals/eval-models.ts',
      unsetMeans: `the agent's (OPENAI_BASE_URL), unless ${prefix}_API_KEY is set (then OpenAI)`,
    },
    [`${prefix}_API_KEY`]: {
      section: 'eval',
      doc: `The ${role}'s API key. With this or ${prefix}_BASE_URL set, the ${role} has an endpoint of its own.`,
      readBy: 'src/evals/eval-models.ts',
      unsetMeans: `the agent's (OPENAI_API_KEY), unless ${prefix}_BASE_URL is set (then no key)`,
    },
    [`${prefix}_MODEL`]: {
      section: 'eval',
      doc: `The ${role}'s model.`,
      readBy: 'src/evals/eval-models.ts',
      example: role === 'judge' ? 'gpt-4o' : 'gpt-4o-mini',
      unsetMeans: defaults.model,
    },
    [`${prefix}_TEMPERATURE`]: {
      section: 'eval',
      doc: `The ${role}'s sampling temperature.`,
      readBy: 'src/evals/eval-models.ts',
      unsetMeans: defaults.temperature,
    },
  }) satisfies Record<string, ElsewhereDoc>;

export const ELSEWHERE: Readonly<Record<string, ElsewhereDoc>> = {
  SHOP_API_URL: {
    section: 'tools',
    doc: `The shop the shipped example tools (prompts/tools/order_status.yaml) call. Tool files name secrets and
      addresses as \${NAME}, looked up in the environment; a tool whose variables are not set is not offered.`,
    readBy: 'the shipped tool files, and src/features/tools.ts',
    example: 'https://shop.example.com/api',
    unsetMeans: 'with the demo model, a small fake shop Hotline starts itself; else the example tools are not offered',
  },
  BOT_URL: {
    section: 'commandLine',
    doc: 'Where the running Hotline is, for npm run call, campaign and simulate.',
    readBy: 'src/hotline-address.ts',
    example: 'http://localhost:3000',
    unsetMeans: 'http://localhost:<PORT> with PORT (and HOST, when it names one address), so the tools reach the Hotline this file configures',
  },
  ...evalRole('EVAL_CALLER', 'simulated caller', { model: "the agent's (LLM_MODEL)", temperature: "the agent's (LLM_TEMPERATURE)" }),
  // A stronger judge is worth it; one that varies from run to run is not.
  ...evalRole('EVAL_JUDGE', 'judge', { model: "the agent's (LLM_MODEL)", temperature: '0' }),
  NODE_EXTRA_CA_CERTS: {
    section: 'node',
    doc: `A model or business system behind a private CA or a self-signed certificate: the CA's PEM file, trusted
      beside Node's own. Node reads it as it starts, before .env is read.`,
    readBy: 'Node',
    example: '/etc/ssl/private-ca.pem',
  },
};
