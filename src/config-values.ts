/**
 * The builders every group of the environment schema (src/config-*.ts) makes its variables with,
 * kept apart so that each group reads the same way and a variable's message is worded like the rest.
 *
 * Each variable's schema carries the one line a person reads when it is wrong:
 * the name, what is expected and, where it helps, how to fix it.
 */
import { z } from 'zod';

export const text = z.string().trim();

export const int = (name: string, min: number, fallback: number, unit = '') => {
  const error = `${name} must be a whole number${unit}, at least ${min}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).default(fallback);
};

/** A port to listen on; 0 picks any free one. */
export const portNumber = (name: string) => {
  const error = `${name} must be a port number 1–65535 (0 picks any free port)`;
  return z.coerce.number({ error }).int({ error }).min(0, { error }).max(65535, { error });
};

export const url = (name: string, example: string) =>
  text
    .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), {
      error: `${name} must be an http:// or https:// URL, e.g. ${example}`,
    })
    .optional();

export const boolean = (name: string, fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: `${name} must be true or false` })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');
