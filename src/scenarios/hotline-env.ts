/**
 * `env:` of a scenario: Hotline's settings for that one scenario (a transfer's
 * ring timeout, ACTION_ARRAYS, another prompts folder), over the runner's own.
 * The runner's own wiring — where Hotline listens, which LLM it asks, the
 * tokens it checks — is not a scenario's to change: the call could not be
 * placed, or would be answered by something else than what is tested.
 */
import { z } from 'zod';

export const RUNNER_OWNED_ENV = new Set([
  'NODE_ENV',
  'HOST',
  'PORT',
  'LOG_LEVEL',
  'TRANSCRIPTS_DIR',
  'ADMIN_TOKEN',
  'AIFLOW_API_URL',
  'AIFLOW_ACCESS_TOKEN',
  'AIFLOW_ID',
  'AIFLOW_BILLING_DEVICE',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'LLM_MODEL',
  'LLM_TEMPERATURE',
  'LLM_TIMEOUT_MS',
  'WS_TOKEN',
  'TRANSPORTS',
]);

const NAME = /^[A-Z][A-Z0-9_]*$/;

export const HotlineEnvSchema = z.record(z.string(), z.unknown()).transform((env, ctx) => {
  // Checked one by one rather than by a record's key and value schemas, so that every
  // problem is reported at its own key, and a wrong value does not hide a wrong name.
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'a setting is named in capitals, digits and _, as in .env' });
    else if (RUNNER_OWNED_ENV.has(name)) ctx.addIssue({ code: 'custom', path: [name], message: `${name} is set by the scenario runner` });
    // YAML reads `30` and `true` as a number and a boolean; the environment only knows text.
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') settings[name] = String(value);
    else ctx.addIssue({ code: 'custom', path: [name], message: 'a setting is text, a number or true/false' });
  }
  return settings;
});
