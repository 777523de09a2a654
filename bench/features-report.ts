/** The features phase's table: each feature's cost per turn, off against on. */
import type { FeatureSide, FeaturesResult } from './features.js';
import { formatMs } from './stats.js';
import { signedMs, table } from './table.js';

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);
const signed = (value: number, digits: number): string => `${value < 0 ? '−' : '+'}${Math.abs(value).toFixed(digits)}`;

export function renderFeatures(result: FeaturesResult): string[] {
  const out: string[] = [
    '',
    `12. Features: what each costs a turn, off and on, ${result.calls} calls × ${result.turnsPerRound} turns × ${result.rounds} rounds a side`,
    `   ${result.note}`,
  ];
  const cells = (side: FeatureSide): (string | number)[] => [
    side.turns,
    side.tokens,
    side.cpuMsPerTurn.toFixed(2),
    kb(side.bytesPerTurn),
    Math.round(side.bytesPerToken),
    formatMs(side.overheadMs.p50),
    formatMs(side.overheadMs.p99),
    side.gcPauseMaxMs === undefined ? '–' : formatMs(side.gcPauseMaxMs),
    side.timedOut,
  ];
  const rows = result.features.flatMap((f) => [
    [f.feature, 'off', ...cells(f.off)],
    ['', 'on', ...cells(f.on)],
    [
      '',
      'on − off',
      '',
      '',
      signed(f.on.cpuMsPerTurn - f.off.cpuMsPerTurn, 2),
      signed((f.on.bytesPerTurn - f.off.bytesPerTurn) / 1024, 1),
      signed(f.on.bytesPerToken - f.off.bytesPerToken, 0),
      signedMs(f.on.overheadMs.p50 - f.off.overheadMs.p50),
      signedMs(f.on.overheadMs.p99 - f.off.overheadMs.p99),
      '',
      '',
    ],
  ]);
  if (rows.length > 0) {
    out.push(
      ...table(['feature', 'side', 'turns', 'tokens', 'CPU ms/turn', 'KB/turn', 'B/token', 'first-speak p50', 'p99', 'GC max', 'timed out'], rows),
    );
    out.push(...result.features.map((f) => `   ${f.feature}: ${f.what}.`));
  }
  for (const { feature, why } of result.skipped) out.push(`   ${feature}: ${why}`);
  return out;
}
