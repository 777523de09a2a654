/**
 * fetch wraps the useful part of a network error ("connect ECONNREFUSED …")
 * in `cause`, sometimes as an AggregateError without a message of its own.
 */
export function describeNetworkError(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  for (const candidate of [cause, cause instanceof AggregateError ? cause.errors[0] : undefined, error]) {
    if (candidate instanceof AggregateError && candidate.errors[0] instanceof Error && candidate.errors[0].message) {
      return candidate.errors[0].message;
    }
    if (candidate instanceof Error && candidate.message) return candidate.message;
    const code = (candidate as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string') return code;
  }
  return String(error);
}
