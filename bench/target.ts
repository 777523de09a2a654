/** A figure of the bench against its aim. */
export interface Target {
  name: string;
  value: number;
  unit: string;
  limit: number;
  /** The figure passes at or above the limit (a ratio); otherwise at or below it. */
  atLeast?: boolean;
  pass: boolean;
}

/** A figure against its limit (lower is better); undefined when the figure was not measured. */
export function judge(name: string, value: number | undefined, limit: number, unit: string): Target | undefined {
  if (value === undefined || Number.isNaN(value)) return undefined;
  return { name, value, unit, limit, pass: value <= limit };
}
