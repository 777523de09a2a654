import type { Logger } from '../../logger.js';
import type { CallerContextSource } from '../ports/business-tools.js';

/**
 * Looks the caller up (a CRM) as the call starts. Resolves with the record's
 * fields, or {} — never later than the source's time limit, whatever the
 * source does: the caller is waiting for the greeting.
 */
export async function lookUpCaller(
  context: CallerContextSource,
  variables: Readonly<Record<string, string | undefined>>,
  log: Logger,
): Promise<{ fields: Record<string, string>; durationMs: number }> {
  const startedAt = performance.now();
  const timeout = AbortSignal.timeout(context.timeoutMs);
  const late = new Promise<Record<string, string>>((resolve) => timeout.addEventListener('abort', () => resolve({}), { once: true }));
  const fields = await Promise.race([
    context.lookup(variables, timeout).catch((error: unknown) => {
      log.warn({ err: error }, 'caller context lookup failed');
      return {};
    }),
    late,
  ]);
  const durationMs = Math.round(performance.now() - startedAt);
  const names = Object.keys(fields);
  log.info({ fields: names, durationMs }, names.length > 0 ? 'caller context found' : 'no caller context');
  return { fields, durationMs };
}
