import { secretsOf, type Config } from '../config.js';

/**
 * Everything the logs must never show: the configured secrets, and the credentials of any
 * configured URL (`OPENAI_BASE_URL=http://user:pass@host/v1`), also where they appear outside
 * the URL, e.g. in an error message that quotes them.
 */
export function logSecrets(config: Config): string[] {
  const fromUrls = [config.llm.baseURL, config.outbound.apiUrl, config.publicUrl, config.databaseUrl].flatMap((raw) => {
    if (!raw || !URL.canParse(raw)) return [];
    const { username, password } = new URL(raw);
    // A lone user name is often a token (https://TOKEN@host); beside a password it is just a name.
    const secret = password || username;
    return secret ? [secret, decode(secret)] : [];
  });
  return [...new Set([...secretsOf(config), ...fromUrls])];
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
