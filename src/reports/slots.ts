/**
 * At most `size` tasks at a time, the rest waiting in order: calls that end
 * together (a shutdown ends them all) must not become a burst of requests
 * the model's rate limit answers with 429.
 */
export class Slots {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next in line, so `busy` never drops below what runs.
      const next = this.waiting.shift();
      if (next) next();
      else this.busy--;
    }
  }
}
