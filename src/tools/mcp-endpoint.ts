import path from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { envNames, expandEnv } from './env-refs.js';
import { MAX_ANSWER_BYTES } from './http-call.js';
import type { McpServerConfig } from './mcp-config.js';

/**
 * Where an MCP server is, with every `${ENV}` of its settings filled in:
 * resolved once per configuration, so a reconnect never reads the
 * environment again and a missing variable is found before anything starts.
 */
export type McpEndpoint =
  | {
      readonly kind: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      /** As configured, made absolute; without one the connection gives the server an empty folder of its own. */
      readonly cwd?: string;
    }
  | { readonly kind: 'http'; readonly url: URL; readonly headers: Readonly<Record<string, string>> };

export type ResolvedEndpoint =
  | {
      readonly ok: true;
      readonly endpoint: McpEndpoint;
      /** The values the `${ENV}` references stood for: kept out of every log line and status. */
      readonly secrets: readonly string[];
    }
  | { readonly ok: false; readonly missing: readonly string[] };

/**
 * A child gets only what it needs to run (a program finds its interpreter
 * through PATH, many tools want HOME), not Hotline's secrets: what else it
 * needs, its configuration says with `env`. That keeps them out of its
 * environment only: a process of the same user can still read Hotline's
 * (`/proc/<pid>/environ`) and its files; the README says how to run a
 * server that must not.
 */
const PASSED_TO_CHILDREN = ['PATH', 'HOME'] as const;

/** `./server.js`, `../bin/x`: a path the configuration means relative to Hotline's working directory. */
const RELATIVE_PATH = /^\.\.?[\\/]/;

/**
 * `baseDir` is Hotline's working directory: a server no longer runs there
 * (beside `.env`), so what its settings say relative to it — a `./` or `../`
 * argument or command, a relative `cwd` — is made absolute from it.
 */
export function resolveEndpoint(
  config: McpServerConfig,
  env: Readonly<Record<string, string | undefined>>,
  baseDir: string = process.cwd(),
): ResolvedEndpoint {
  const missing = new Set<string>();
  const secrets = new Set<string>();
  const expandAll = (values: Readonly<Record<string, string>> | undefined): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [key, text] of Object.entries(values ?? {})) {
      const expanded = expandEnv(text, env);
      for (const name of expanded.missing) missing.add(name);
      for (const name of envNames(text)) {
        const value = env[name];
        if (value) secrets.add(value);
      }
      out[key] = expanded.value;
    }
    return out;
  };

  let endpoint: McpEndpoint;
  if (config.url !== undefined) {
    endpoint = { kind: 'http', url: new URL(config.url), headers: expandAll(config.headers) };
  } else {
    const base: Record<string, string> = {};
    for (const name of PASSED_TO_CHILDREN) {
      const value = env[name];
      if (value !== undefined) base[name] = value;
    }
    const fromBase = (value: string): string => (RELATIVE_PATH.test(value) ? path.resolve(baseDir, value) : value);
    endpoint = {
      kind: 'stdio',
      // The schema guarantees a command when there is no url.
      command: fromBase(config.command ?? ''),
      args: (config.args ?? []).map(fromBase),
      env: { ...base, ...expandAll(config.env) },
      ...(config.cwd !== undefined ? { cwd: path.resolve(baseDir, config.cwd) } : {}),
    };
  }
  if (missing.size > 0) return { ok: false, missing: [...missing] };
  return { ok: true, endpoint, secrets: [...secrets] };
}

/** A fresh transport for one connection attempt (an SDK transport cannot be started twice); `workDir` for a server without `cwd`. */
export function openTransport(endpoint: McpEndpoint, workDir?: string): Transport {
  if (endpoint.kind === 'http') {
    return new StreamableHTTPClientTransport(endpoint.url, { requestInit: { headers: { ...endpoint.headers } } });
  }
  return new StdioClientTransport({
    command: endpoint.command,
    args: [...endpoint.args],
    env: { ...endpoint.env },
    // Piped, not inherited: a server's chatter belongs in our log under its name, not on our stderr.
    stderr: 'pipe',
    // One message at most this long, as a business system's answer (the SDK's default is 10 MB): a
    // longer one fails its call, not Hotline's memory.
    maxBufferSize: MAX_ANSWER_BYTES,
    ...(endpoint.cwd !== undefined ? { cwd: endpoint.cwd } : workDir !== undefined ? { cwd: workDir } : {}),
  });
}
