import { z } from 'zod';

/**
 * One MCP server of `<PROMPTS_DIR>/tools/mcp.yaml`:
 *
 *   servers:
 *     - name: calendar                 # [A-Za-z0-9_-]{1,32}, unique
 *       command: node                  # stdio: command, args?, env? (values may use ${ENV_NAME}), cwd?
 *       args: [./mcp/calendar.js]      # ./ and ../ are from Hotline's working directory; the server runs
 *                                      # in `cwd`, by default an empty folder of its own (mcp-endpoint.ts)
 *     - name: crm
 *       url: http://localhost:3001/mcp # Streamable HTTP: url, headers? (values may use ${ENV_NAME})
 *       headers: { Authorization: "Bearer ${CRM_TOKEN}" }
 *       timeout_ms: 4000               # per tool call (default TOOL_TIMEOUT_MS)
 *       max_chars: 2000                # cap of a result the model sees (default TOOL_RESULT_MAX_CHARS)
 *       hold: ["One moment, I'm checking the calendar."]
 *       tools: [find_slot, book_slot]  # only these are offered (default: all)
 *       side_effect: [book_slot]       # these change something (default: every tool not annotated readOnlyHint)
 *       prefix: cal_                   # offered as cal_find_slot … (default: none)
 *
 * Exactly one of `command` and `url`.
 */
export const McpServerSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, _ and -, at most 32'),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/ }).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    timeout_ms: z.number().int().min(100).max(60_000).optional(),
    max_chars: z.number().int().min(100).max(100_000).optional(),
    hold: z.array(z.string().min(1)).optional(),
    tools: z.array(z.string().min(1)).optional(),
    side_effect: z.array(z.string().min(1)).optional(),
    prefix: z.string().regex(/^[A-Za-z0-9_-]{0,16}$/).optional(),
  })
  .refine((s) => (s.command === undefined) !== (s.url === undefined), {
    message: 'give exactly one of command (a stdio server) and url (a Streamable HTTP server)',
  });

export type McpServerConfig = z.output<typeof McpServerSchema>;

export const McpFileSchema = z.strictObject({ servers: z.array(McpServerSchema) });
