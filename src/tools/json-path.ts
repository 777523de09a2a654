import { z } from 'zod';

/**
 * `order.status`, `items.0.name`: where in a JSON answer the part the model
 * (or the caller context) needs is. Numeric parts index arrays; only own
 * properties are read, so a path can never reach `__proto__` or `constructor`.
 */
export const JsonPathSchema = z
  .string()
  .regex(/^[^.\s]+(\.[^.\s]+)*$/, 'a dot path such as order.status or items.0.name, without spaces or empty parts');

/** The parts of a checked path. */
export function pathParts(path: string): readonly string[] {
  return Object.freeze(path.split('.'));
}

/** The value at `parts` inside `value`, or undefined when the answer has nothing there. */
export function pick(value: unknown, parts: readonly string[]): unknown {
  let current = value;
  for (const part of parts) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(part)) return undefined;
      current = current[Number(part)];
    } else if (typeof current === 'object' && current !== null) {
      if (!Object.hasOwn(current, part)) return undefined;
      current = (current as Record<string, unknown>)[part];
    } else {
      return undefined;
    }
  }
  return current;
}
