/**
 * Before and after an edit: the same evals against two prompt folders, item
 * by item. A drop whose confidence intervals do not overlap is a regression;
 * a smaller drop is shown as worse, but may be chance — run more to tell.
 */
import type { EvalSummary, ItemStats } from './eval-summary.js';

export type Change = 'better' | 'worse' | 'same' | 'new' | 'gone';

export interface ItemChange {
  readonly eval: string;
  readonly item: string;
  readonly kind: ItemStats['kind'];
  readonly before: ItemStats | undefined;
  readonly after: ItemStats | undefined;
  readonly change: Change;
  /** The intervals do not overlap: not chance, at 95 %. */
  readonly significant: boolean;
}

export interface EvalChange {
  readonly eval: string;
  readonly firstSpeakP50Ms: { readonly before: number | null; readonly after: number | null };
  readonly agentCostPerCallUsd: { readonly before: number | null; readonly after: number | null };
}

export interface Comparison {
  readonly items: readonly ItemChange[];
  readonly evals: readonly EvalChange[];
  /** Items that got worse beyond chance. */
  readonly regressions: readonly ItemChange[];
}

export function compareSuites(before: readonly EvalSummary[], after: readonly EvalSummary[]): Comparison {
  const items: ItemChange[] = [];
  const evals: EvalChange[] = [];
  for (const now of after) {
    const then = before.find((summary) => summary.name === now.name);
    evals.push({
      eval: now.name,
      firstSpeakP50Ms: { before: then?.firstSpeakP50Ms ?? null, after: now.firstSpeakP50Ms },
      agentCostPerCallUsd: { before: then?.agentCostPerCallUsd ?? null, after: now.agentCostPerCallUsd },
    });
    const names = [...new Set([...(then?.items ?? []).map((i) => i.name), ...now.items.map((i) => i.name)])];
    for (const name of names) {
      const was = then?.items.find((i) => i.name === name);
      const is = now.items.find((i) => i.name === name);
      items.push(compareItem(now.name, name, was, is));
    }
  }
  return { items, evals, regressions: items.filter((item) => item.change === 'worse' && item.significant) };
}

function compareItem(evalName: string, name: string, before: ItemStats | undefined, after: ItemStats | undefined): ItemChange {
  const kind = (after ?? before)?.kind ?? 'criterion';
  const base = { eval: evalName, item: name, kind, before, after };
  if (before?.rate == null && after?.rate == null) return { ...base, change: 'same', significant: false };
  if (before?.rate == null) return { ...base, change: 'new', significant: false };
  if (after?.rate == null) return { ...base, change: 'gone', significant: false };
  const change: Change = after.rate < before.rate ? 'worse' : after.rate > before.rate ? 'better' : 'same';
  const significant = change === 'worse' ? after.high < before.low : change === 'better' ? after.low > before.high : false;
  return { ...base, change, significant };
}
