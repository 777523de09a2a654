/**
 * `${ENV_NAME}` in a tool's URL, headers or an MCP server's settings: secrets
 * come from the environment only, never from the files. `$${…}` is a literal
 * `${…}`.
 */
const ENV_REF = /\$?\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface Expanded {
  readonly value: string;
  /** Names referenced but not set (or empty). */
  readonly missing: readonly string[];
}

export function expandEnv(text: string, env: Readonly<Record<string, string | undefined>>): Expanded {
  const missing: string[] = [];
  const value = text.replace(ENV_REF, (ref: string, name: string) => {
    if (ref.startsWith('$$')) return ref.slice(1);
    const found = env[name];
    if (found === undefined || found === '') {
      if (!missing.includes(name)) missing.push(name);
      return '';
    }
    return found;
  });
  return { value, missing };
}

/** The environment variables a text refers to, in order, each once. */
export function envNames(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(ENV_REF)) {
    if (match[0].startsWith('$$')) continue;
    const name = match[1]!;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}
