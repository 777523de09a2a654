/**
 * How many passages hold each stem: what a word of a question costs to search with. Ranking reads
 * every passage a word is in, so a word in most of them ("coffee" in a coffee shop's documents)
 * costs the most and tells the least; knowledge-base.ts searches with the rarest words first, within
 * a budget. Prefixes are counted too: a stem the documents lack is searched as a prefix.
 */
export class TermCounts {
  /** The stems, sorted, and the running sum of their passages: a prefix's count is one subtraction. */
  private readonly sorted: string[];
  private readonly running: Float64Array;

  constructor(
    /** Passages in the index. */
    readonly passages: number,
    private readonly counts: ReadonlyMap<string, number>,
  ) {
    this.sorted = [...counts.keys()].sort();
    this.running = new Float64Array(this.sorted.length + 1);
    for (let i = 0; i < this.sorted.length; i++) this.running[i + 1] = this.running[i]! + counts.get(this.sorted[i]!)!;
  }

  static readonly EMPTY = new TermCounts(0, new Map());

  /** Passages holding `stem` itself; 0 when none does. */
  exact(stem: string): number {
    return this.counts.get(stem) ?? 0;
  }

  /** Passages (counted once per stem they hold) holding a stem that starts with `prefix`. */
  prefix(prefix: string): number {
    const from = this.lowerBound(prefix);
    // Every string starting with `prefix` sorts before `prefix` followed by the highest code unit.
    const to = this.lowerBound(`${prefix}\uffff`);
    return this.running[to]! - this.running[from]!;
  }

  private lowerBound(key: string): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.sorted[mid]! < key) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
