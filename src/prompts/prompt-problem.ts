/** Something wrong (or worth knowing) about a file of the prompts folder, said to whoever fixes it. */
export interface PromptProblem {
  /** The file, relative to the prompts folder (`de/greeting.md`). */
  file: string;
  severity: 'error' | 'warning';
  message: string;
}

/** The code of a file system error (`ENOENT`), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
