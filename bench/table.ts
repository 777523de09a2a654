/** The bench's printed tables: columns padded to their widest cell. */
import { formatMs } from './stats.js';

function row(cells: (string | number)[], widths: number[]): string {
  return cells.map((cell, i) => String(cell).padStart(widths[i] ?? 8)).join('  ');
}

export function table(header: string[], rows: (string | number)[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  return [row(header, widths), ...rows.map((r) => row(r, widths))].map((line) => `  ${line}`);
}

/** A difference in ms with its sign; – when not measured. */
export const signedMs = (ms: number | undefined): string => (ms === undefined ? '–' : `${ms < 0 ? '−' : '+'}${formatMs(Math.abs(ms))}`);
