import { pino } from 'pino';
import type { PromptProblem } from '../prompts/folder-load.js';
import { httpToolDefinition } from './http-tool.js';
import type { McpServerConfig } from './mcp-config.js';
import type { Env } from './request-template.js';
import { readToolsFolder, type ToolFileReport } from './tool-folder.js';
import { assembleOffer, describeLeftOut, type OfferItem } from './tool-offer.js';
import { resolveEndpoint } from './mcp-endpoint.js';

export interface ToolsFolderCheck {
  files: { file: string; summary: string; needs: string[]; problems: PromptProblem[] }[];
  /** True if no file has a problem. */
  ok: boolean;
}

export interface ToolsCheckOptions {
  /**
   * Variables something other than the environment will set, by name, with
   * what to say about it: with the demo model, Hotline's fake shop sets
   * SHOP_API_URL. Such a variable is set for the check (to `value`).
   */
  readonly standIns?: Readonly<Record<string, { readonly value: string; readonly note: string }>>;
  /**
   * Start (or connect to) the MCP servers and check the tools they list,
   * as Hotline would offer them beside the tool files: up to this long for
   * each. Without it, mcp.yaml's servers are checked as written only.
   */
  readonly mcpTimeoutMs?: number;
}

/**
 * Everything prompts:check reports about `<dir>/tools`; a missing folder is
 * fine and lists nothing. A variable a file needs that is not set is a
 * problem: Hotline leaves that tool (or server, or the caller context) out.
 */
export async function checkToolsFolder(dir: string, env: Env, options: ToolsCheckOptions = {}): Promise<ToolsFolderCheck> {
  const standIns = options.standIns ?? {};
  const checkEnv: Env = { ...env, ...Object.fromEntries(Object.entries(standIns).map(([name, s]) => [name, s.value])) };
  const read = await readToolsFolder(dir, checkEnv);
  const files = read.reports.map((report) => ({ ...report, summary: annotated(report, standIns), needs: [...report.needs], problems: [...report.problems] }));
  const problem = (file: string, message: string): void => {
    files.find((f) => f.file === file)?.problems.push({ file, severity: 'error', message });
  };

  for (const { file, spec } of [...read.tools, ...(read.context ? [read.context] : [])]) {
    const what = file === read.context?.file ? "the caller's record is not looked up" : 'the tool is not offered';
    if (spec.request.missingEnv.length > 0) problem(file, `${unsetText(spec.request.missingEnv)}: ${what} until it is set`);
  }
  const startable = read.mcpServers.filter((server) => {
    const resolved = resolveEndpoint(server, checkEnv);
    if (!resolved.ok && read.mcpFile) problem(read.mcpFile, `MCP server ${server.name}: ${unsetText(resolved.missing)}: the server is not started until it is set`);
    return resolved.ok;
  });

  const fileTools: OfferItem[] = read.tools.map(({ file, name, spec }) => ({ name, definition: httpToolDefinition(name, spec), source: file }));
  const mcpFile = read.mcpFile;
  const listings = options.mcpTimeoutMs !== undefined && mcpFile ? await listMcpTools(startable, checkEnv, options.mcpTimeoutMs) : undefined;
  if (mcpFile) for (const message of listings?.problems ?? []) problem(mcpFile, message);
  const { leftOut } = assembleOffer([fileTools, ...(listings?.tools ?? [])]);
  for (const left of leftOut) {
    // A tool file's own problem; an MCP server's tool's is mcp.yaml's.
    const file = fileTools.includes(left.tool) ? left.tool.source : mcpFile;
    if (file) problem(file, describeLeftOut(left));
  }

  return { files, ok: files.every((f) => f.problems.length === 0) };
}

/** The environment variables, by name only: their values may be secrets. */
function unsetText(names: readonly string[]): string {
  return `${names.map((n) => `\${${n}}`).join(' ')} ${names.length === 1 ? 'is' : 'are'} not set`;
}

/** The summary, with what stands in for each variable the environment does not set. */
function annotated(report: ToolFileReport, standIns: NonNullable<ToolsCheckOptions['standIns']>): string {
  const notes = report.needs.flatMap((name) => {
    const standIn = standIns[name];
    if (!standIn) return [];
    return [report.needs.length === 1 ? standIn.note : `\${${name}} ${standIn.note}`];
  });
  return notes.length === 0 ? report.summary : `${report.summary} (${notes.join('; ')})`;
}

/**
 * The tools each MCP server lists, as Hotline would offer them, and why any
 * is not: servers started (or connected to) as Hotline does, each given
 * `timeoutMs` to come up, all closed again before this returns.
 */
async function listMcpTools(servers: readonly McpServerConfig[], env: Env, timeoutMs: number): Promise<{ tools: OfferItem[][]; problems: string[] }> {
  // Loaded only here: the dashboard's check, which starts no server, does without the MCP client.
  const { McpHub } = await import('./mcp-hub.js');
  const hub = new McpHub(pino({ level: 'silent' }), {
    env,
    defaults: { timeoutMs, maxChars: 2_000 },
    // One attempt each: a check says what is, it does not wait for a server to come back.
    retry: { initialMs: 3_600_000, maxMs: 3_600_000 },
    connectTimeoutMs: timeoutMs,
  });
  try {
    hub.update(servers);
    await new Promise<void>((resolve) => {
      const settled = (): boolean => hub.status().every((s) => s.up || s.lastError !== undefined);
      if (settled()) return resolve();
      // Each attempt ends within timeoutMs by itself; this is only in case one never says so.
      const guard = setTimeout(done, timeoutMs + 5_000);
      const off = hub.onChange(() => {
        if (settled()) done();
      });
      function done(): void {
        clearTimeout(guard);
        off();
        resolve();
      }
    });
    const problems = hub.status().flatMap((status) => [
      ...(status.up ? [] : [`MCP server ${status.name} could not be reached (${status.lastError ?? 'no answer'}): its tools were not checked`]),
      ...(status.problems ?? []),
    ]);
    return { tools: hub.listings().map((listing) => [...listing.tools]), problems };
  } finally {
    await hub.close();
  }
}
