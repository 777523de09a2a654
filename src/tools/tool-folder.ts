import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { describe, errorCode, type PromptProblem } from '../prompts/folder-load.js';
import { describeYamlProblem, parseYamlFile } from '../yaml-file.js';
import { contextFileSchema, type ContextFile } from './caller-context.js';
import { envNames } from './env-refs.js';
import { McpFileSchema, type McpServerConfig } from './mcp-config.js';
import type { Env } from './request-template.js';
import { toolFileSchema, toolNameProblem, type ToolFile } from './tool-file.js';
import { nameKey } from './tool-names.js';

/**
 * Reads `<PROMPTS_DIR>/tools`: mcp.yaml (MCP servers), context.yaml (the
 * caller context) and one HTTP tool per other YAML file. Reading only; what
 * is offered, and when, is the store's business.
 */

export const TOOLS_FOLDER = 'tools';

export interface ToolFileReport {
  /** Relative to the prompts folder: `tools/order_status.yaml`. */
  readonly file: string;
  /** What the file makes, for prompts:check: `tool order_status, GET, side effect: no`. */
  readonly summary: string;
  /** The environment variables it refers to, set or not. */
  readonly needs: readonly string[];
  readonly problems: readonly PromptProblem[];
}

export interface ReadTool {
  readonly file: string;
  readonly name: string;
  readonly spec: ToolFile;
}

export interface ToolsFolderRead {
  /** False if there is no tools folder: no tools, and no problem either. */
  readonly present: boolean;
  /** Files without errors only. */
  readonly tools: readonly ReadTool[];
  readonly context: { readonly file: string; readonly spec: ContextFile } | undefined;
  readonly mcpServers: readonly McpServerConfig[];
  /** The file the MCP servers come from, if there is one. */
  readonly mcpFile: string | undefined;
  /** Every YAML file by name, and the folder itself if it cannot be read. */
  readonly reports: readonly ToolFileReport[];
  readonly problems: readonly PromptProblem[];
  /** Equal for equal texts and problems: tells an edit from the noise of editors' temporary files. */
  readonly fingerprint: string;
}

type FileText = { text: string } | { error: string };

const YAML_FILE = /^[^.].*\.ya?ml$/i;
const MCP_FILE = /^mcp\.ya?ml$/i;
const CONTEXT_FILE = /^context\.ya?ml$/i;

export async function readToolsFolder(promptsDir: string, env: Env): Promise<ToolsFolderRead> {
  const dir = path.join(promptsDir, TOOLS_FOLDER);
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries.filter((e) => e.isFile() && YAML_FILE.test(e.name)).map((e) => e.name);
  } catch (error) {
    // A prompts folder that is missing or no folder is the prompt files' problem, reported with them.
    if (errorCode(error) === 'ENOENT' || (errorCode(error) === 'ENOTDIR' && !(await isFile(dir)))) return folderRead(false, []);
    const message = errorCode(error) === 'ENOTDIR' ? 'is a file; make it a folder of tool files' : `cannot be read: ${describe(error)}`;
    const problem: PromptProblem = { file: TOOLS_FOLDER, severity: 'error', message };
    return folderRead(true, [{ file: TOOLS_FOLDER, summary: 'tools folder', needs: [], problems: [problem] }]);
  }
  // By name, so that of two files with one tool name the later is always the same one.
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const texts = await Promise.all(names.map((name) => readText(path.join(dir, name))));

  const reader = new FolderReader(env);
  names.forEach((name, i) => reader.add(name, texts[i]!));
  return folderRead(true, reader.reports, reader, texts);
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

async function readText(file: string): Promise<FileText> {
  try {
    return { text: (await readFile(file, 'utf8')).replace(/^\uFEFF/, '') };
  } catch (error) {
    return { error: describe(error) };
  }
}

function folderRead(
  present: boolean,
  reports: ToolFileReport[],
  reader?: FolderReader,
  texts: readonly FileText[] = [],
): ToolsFolderRead {
  const problems = reports.flatMap((r) => r.problems);
  const fingerprint = createHash('sha256')
    .update(JSON.stringify({ present, files: reports.map((r) => r.file), texts, problems }))
    .digest('hex');
  return {
    present,
    tools: reader?.tools ?? [],
    context: reader?.context,
    mcpServers: reader?.mcpServers ?? [],
    mcpFile: reader?.mcpFile,
    reports,
    problems,
    fingerprint,
  };
}

/** Reads the files one by one, in order: a tool name or a special file seen twice is the later file's error. */
class FolderReader {
  readonly reports: ToolFileReport[] = [];
  readonly tools: ReadTool[] = [];
  context: { file: string; spec: ContextFile } | undefined;
  mcpServers: McpServerConfig[] = [];
  mcpFile: string | undefined;
  private contextFile: string | undefined;
  /** The file of each tool so far, by its name ignoring case (nameKey). */
  private readonly toolFiles = new Map<string, { name: string; file: string }>();

  constructor(private readonly env: Env) {}

  add(name: string, read: FileText): void {
    const file = `${TOOLS_FOLDER}/${name}`;
    if (MCP_FILE.test(name)) this.addMcp(file, read);
    else if (CONTEXT_FILE.test(name)) this.addContext(file, read);
    else this.addTool(file, name.replace(/\.ya?ml$/i, ''), read);
  }

  private addTool(file: string, stem: string, read: FileText): void {
    const schema = toolFileSchema(this.env).superRefine((tool, ctx) => {
      const name = tool.name ?? stem;
      if (tool.name === undefined) {
        const problem = toolNameProblem(stem);
        if (problem !== undefined) {
          ctx.addIssue({ code: 'custom', message: `the file name makes no tool name: ${problem}; rename the file or write name:` });
        }
      }
      const earlier = this.toolFiles.get(nameKey(name));
      if (earlier !== undefined) {
        const same = earlier.name === name ? '' : ` ("${earlier.name}": names are compared ignoring case)`;
        const message = `"${name}" is already the name of the tool in ${earlier.file}${same}`;
        ctx.addIssue({ code: 'custom', path: tool.name === undefined ? [] : ['name'], message });
      }
    });
    const parsed = this.parse(file, read, schema, 'HTTP tool (not loaded)');
    if (parsed === undefined) return;
    const name = parsed.name ?? stem;
    this.toolFiles.set(nameKey(name), { name, file });
    this.tools.push({ file, name, spec: parsed });
    const { request } = parsed;
    const summary = `tool ${name}, ${request.method}, side effect: ${parsed.side_effect ? 'yes' : 'no'}${needsText(request.needs)}`;
    this.report(file, summary, request.needs, []);
  }

  private addContext(file: string, read: FileText): void {
    if (this.contextFile !== undefined) {
      this.report(file, 'caller context (not loaded)', [], [`only one caller context file is read, and that is ${this.contextFile}`]);
      return;
    }
    this.contextFile = file;
    const spec = this.parse(file, read, contextFileSchema(this.env), 'caller context (not loaded)');
    if (spec === undefined) return;
    this.context = { file, spec };
    const { method, needs } = spec.request;
    this.report(file, `caller context, ${method}, ${spec.timeout_ms} ms${needsText(needs)}`, needs, []);
  }

  private addMcp(file: string, read: FileText): void {
    if (this.mcpFile !== undefined) {
      this.report(file, 'MCP servers (not loaded)', [], [`only one MCP servers file is read, and that is ${this.mcpFile}`]);
      return;
    }
    this.mcpFile = file;
    const schema = McpFileSchema.superRefine((mcp, ctx) => {
      const seen = new Set<string>();
      mcp.servers.forEach((server, i) => {
        if (seen.has(server.name)) {
          ctx.addIssue({ code: 'custom', path: ['servers', i, 'name'], message: `"${server.name}" names another server already` });
        }
        seen.add(server.name);
      });
    });
    const spec = this.parse(file, read, schema, 'MCP servers (not loaded)');
    if (spec === undefined) return;
    this.mcpServers = spec.servers;
    const kinds = spec.servers.map((s) => `${s.name}: ${s.command === undefined ? 'http' : 'stdio'}`);
    const count = `${spec.servers.length} MCP server${spec.servers.length === 1 ? '' : 's'}`;
    // Where mcp-config.ts says ${…} may stand.
    const values = spec.servers.flatMap((s) => [...Object.values(s.env ?? {}), ...Object.values(s.headers ?? {})]);
    const unique = [...new Set(values.flatMap((v) => envNames(v)))];
    this.report(file, `${count}${kinds.length > 0 ? ` (${kinds.join(', ')})` : ''}${needsText(unique)}`, unique, []);
  }

  private parse<S extends z.ZodType>(file: string, read: FileText, schema: S, failed: string): z.output<S> | undefined {
    if ('error' in read) {
      this.report(file, failed, [], [`cannot be read: ${read.error}`]);
      return undefined;
    }
    const parsed = parseYamlFile(read.text, schema);
    if ('data' in parsed) return parsed.data;
    this.report(file, failed, [], parsed.problems.map(describeYamlProblem));
    return undefined;
  }

  private report(file: string, summary: string, needs: readonly string[], messages: readonly string[]): void {
    this.reports.push({ file, summary, needs, problems: messages.map((message) => ({ file, severity: 'error', message })) });
  }
}

function needsText(names: readonly string[]): string {
  return names.length === 0 ? '' : `, needs ${names.map((n) => `\${${n}}`).join(' ')}`;
}
