/**
 * The business's tools: the HTTP tool files of `<PROMPTS_DIR>/tools` (watched) and the MCP servers
 * they name. With the demo model and no shop configured, a small fake shop answers the shipped
 * example tools. With SMS_MAX_PER_CALL above 0, the send_sms tool and its templates (`sms/`).
 */
import type { Config } from '../config.js';
import { startDemoShop } from '../demo/shop.js';
import type { Logger } from '../logger.js';
import { logSecrets } from '../startup/log-secrets.js';
import type { ToolBox } from '../call/ports/business-tools.js';
import { McpHub } from '../tools/mcp-hub.js';
import { SmsTemplateStore } from '../tools/sms-template-store.js';
import { smsToolBox } from '../tools/sms-tool.js';
import { ToolStore } from '../tools/tool-store.js';
import type { OpenedStack } from './opened.js';

export type ToolEnv = Readonly<Record<string, string | undefined>>;

export interface Tools {
  readonly files: ToolStore;
  readonly mcp: McpHub;
  /** What the tool files' `${NAME}` references are filled from (the demo shop's address added). */
  readonly env: ToolEnv;
  /** send_sms, when calls may send text messages (SMS_MAX_PER_CALL). */
  readonly sms: ToolBox | undefined;
}

export async function openTools(config: Config, logger: Logger, options: { watch: boolean; env: ToolEnv }, opened: OpenedStack): Promise<Tools> {
  let env = options.env;
  if (config.llm.mode === 'demo' && !env.SHOP_API_URL) {
    const shop = await startDemoShop();
    opened.push('the demo shop', { close: () => shop.close() });
    env = { ...env, SHOP_API_URL: shop.url };
  }
  const defaults = { timeoutMs: config.tools.timeoutMs, maxChars: config.tools.resultMaxChars };
  // Taken out of every tool answer with the tools' own ${…} values: a business system may echo them.
  const secrets = logSecrets(config);
  const files = await ToolStore.open(config.promptsDir, logger, { watch: options.watch, env, defaults, secrets });
  opened.push('the tool files', { close: () => files.close() });
  const mcp = new McpHub(logger, { env, defaults, secrets });
  opened.push('the MCP servers', { close: () => mcp.close() });
  mcp.update(files.mcpServers);
  files.onChange(() => mcp.update(files.mcpServers));
  let sms: ToolBox | undefined;
  if (config.tools.smsMaxPerCall > 0) {
    const templates = await SmsTemplateStore.open(config.promptsDir, logger, { watch: options.watch });
    opened.push('the text message templates', { close: () => templates.close() });
    sms = smsToolBox(() => templates.templates);
  }
  return { files, mcp, env, sms };
}
