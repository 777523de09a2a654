/**
 * What a person reads about each environment variable, declared once beside its schema entry
 * (`.register(variableDocs, {...})` in src/config-*.ts) and turned by `npm run config:docs` into
 * docs/configuration.md and .env.example, so that the schema, the reference and the example file
 * cannot disagree. This file holds the sections they are grouped in and the shape of an entry.
 */
import { z } from 'zod';

/**
 * The sections, in the order both files list them. A section's anchor in docs/configuration.md is
 * its title as GitHub spells headings (`#llm`, `#personal-data`): other documents link to it, so a
 * title is renamed only with the links to it.
 */
export const SECTIONS = {
  server: {
    title: 'Server',
    intro: 'Where Hotline listens, how the voice service reaches it, and how much it logs.',
  },
  llm: {
    title: 'LLM',
    intro: 'Any OpenAI-compatible Chat Completions endpoint: OpenAI, Azure, Ollama, vLLM, OpenRouter, LiteLLM and the like.',
  },
  tools: {
    title: 'Business tools',
    intro: 'The HTTP tools of prompts/tools/*.yaml and the MCP servers of prompts/tools/mcp.yaml.',
  },
  operations: {
    title: 'Operations',
    intro: 'How many calls at once, and how calls end when they go quiet or the process stops.',
  },
  demo: {
    title: 'Built-in demo model',
    intro: 'Only when no LLM is configured (neither OPENAI_API_KEY nor OPENAI_BASE_URL is set).',
  },
  calls: {
    title: 'Calls',
    intro: 'The prompt files, and where the record of the calls is kept.',
  },
  replicas: {
    title: 'Replicas',
    intro: 'Several Hotline processes on one PostgreSQL database (DATABASE_URL), on one machine or several.',
  },
  reports: {
    title: 'Reports',
    intro:
      'When a call ends, its report (who, when, how it ended, turns and latencies, tool calls, the transcript, and the ' +
      'summary and fields prompts/report.md asks the LLM for) is stored in the database and, with REPORT_WEBHOOK_URL ' +
      'set, POSTed there.',
  },
  knowledge: {
    title: 'Knowledge',
    intro: "The business's documents the agent answers from: searched inside each turn, in the store's own full-text search (docs/knowledge.md).",
  },
  languages: {
    title: 'Languages',
    intro: 'A language per call from the prompts\' language folders, and what the recogniser is told (docs/languages.md).',
  },
  voicemail: {
    title: 'Voicemail',
    intro: 'Outbound calls that reach a mailbox leave a message instead of starting a conversation.',
  },
  transfers: {
    title: 'Transfers',
    intro: 'Where the transfer tool sends a caller, and what the person who picks up sees.',
  },
  security: {
    title: 'Transports and security',
    intro:
      'How the WebSocket and the webhook behave, and who may use them. Every secret Hotline checks (WEBHOOK_SECRET, ' +
      'WS_TOKEN, ADMIN_TOKEN, METRICS_TOKEN, CLUSTER_SECRET, REPORT_WEBHOOK_SECRET) takes at least 16 characters, e.g. ' +
      '`openssl rand -hex 32`: a shorter one is warned about at startup, and refused with NODE_ENV=production.',
  },
  outbound: {
    title: 'Outbound calls',
    intro: 'Follow-up calls and campaigns placed through the voice service\'s REST API, and the admin API that asks for them.',
  },
  privacy: {
    title: 'Personal data',
    intro: 'What of a call\'s words is redacted before anything is written, and how long each kind of record is kept.',
  },
  dashboard: {
    title: 'Dashboard access',
    intro:
      'Staff log in with accounts of their own (`npm run staff -- add …`), or with ADMIN_TOKEN as the first admin. ' +
      'Behind an authenticating reverse proxy (oauth2-proxy and the like), Hotline can take the proxy\'s word instead.',
  },
  tracing: {
    title: 'Tracing',
    intro:
      'OpenTelemetry traces of every call (a span per turn, LLM request, tool run, speak and report delivery), sent ' +
      'as OTLP/HTTP JSON. Off unless an endpoint is set; off, no OpenTelemetry is loaded.',
  },
  commandLine: {
    title: 'Command-line tools',
    intro: 'Read by npm run call, campaign and simulate, not by Hotline itself.',
  },
  eval: {
    title: 'Read by npm run eval',
    intro:
      'Not read by Hotline. The agent of an eval is the LLM above (OPENAI_API_KEY, OPENAI_BASE_URL, LLM_MODEL). The ' +
      'simulated caller and the judge use it too, unless given their own here. With no LLM set at all, all three are ' +
      'the built-in scripted model, playing each eval\'s scripted: section.',
  },
  node: {
    title: 'Read by Node',
    intro:
      'Node\'s own variables, read as the process starts, before .env is: set them in the real environment (the ' +
      'service unit, the container), not in .env.',
  },
} as const satisfies Record<string, { title: string; intro: string }>;

export type SectionId = keyof typeof SECTIONS;

/** One variable as a person reads about it. */
export interface VariableDoc {
  section: SectionId;
  /**
   * What it does, its unit and range, and what unset means. Written as running text: line breaks and
   * indentation are only the source's, the generator joins and re-wraps them.
   */
  doc: string;
  /** A value worth showing (an address, a format); .env.example offers it commented out. */
  example?: string;
  /**
   * The default in words, for a variable whose default the code works out rather than the schema
   * states (the host name, LLM_MODEL, "the service's own"). A schema default is never repeated here.
   */
  unsetMeans?: string;
  /**
   * The schema's default as a person writes it, where the schema spells it otherwise (an empty list is
   * `none`). The reference test sets it and checks the configuration is the default one.
   */
  defaultSpelled?: string;
}

/** The registry the groups' schema entries are described in; src/config-reference.ts reads it. */
export const variableDocs = z.registry<VariableDoc>();
