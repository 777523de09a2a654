const OPEN = ['<think>', '<thinking>'];
const CLOSE = ['</think>', '</thinking>'];

/**
 * Some servers stream a reasoning model's thoughts inside the content, between
 * `<think>` and `</think>` (DeepSeek R1 on the Hugging Face router, vLLM
 * without a reasoning parser). The caller must never hear them. Tags may be
 * split across deltas, so a possible tag at the end of a delta waits for the next.
 */
export class ThinkTagFilter {
  private inside = false;
  private pending = '';
  /** Some of the last delta pushed was inside a think block. */
  thinking = false;

  /** The text of this delta outside think blocks. */
  push(delta: string): string {
    // The usual case, on every token: no tag anywhere near.
    if (!this.inside && this.pending === '' && !delta.includes('<')) {
      this.thinking = false;
      return delta;
    }
    const s = this.pending + delta;
    this.pending = '';
    let out = '';
    let thinking = this.inside;
    let i = 0;
    while (i < s.length) {
      const tags = this.inside ? CLOSE : OPEN;
      const at = this.inside ? s.indexOf('</', i) : s.indexOf('<', i);
      if (at < 0) {
        if (!this.inside) out += s.slice(i);
        break;
      }
      if (!this.inside) out += s.slice(i, at);
      const rest = s.slice(at);
      const tag = tags.find((t) => rest.startsWith(t));
      if (tag) {
        this.inside = !this.inside;
        thinking = true;
        i = at + tag.length;
        continue;
      }
      if (tags.some((t) => t.startsWith(rest))) {
        // Perhaps a tag the next delta completes.
        this.pending = rest;
        break;
      }
      if (!this.inside) out += '<';
      i = at + 1;
    }
    this.thinking = thinking;
    return out;
  }

  /** The end of the content: a held back "<thi" that never became a tag was text after all. */
  flush(): string {
    const rest = this.inside ? '' : this.pending;
    this.pending = '';
    this.inside = false;
    return rest;
  }
}
