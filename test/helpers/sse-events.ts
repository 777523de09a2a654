/** Server-sent events as they arrive, by name. */
export function eventsOf(body: ReadableStream<Uint8Array>) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const queue: { event: string; data: unknown }[] = [];
  async function pull(): Promise<void> {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended');
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) queue.push({ event, data: JSON.parse(data) as unknown });
    }
  }
  return {
    async nextWith(name: string, predicate: (data: unknown) => boolean): Promise<unknown> {
      for (;;) {
        const at = queue.findIndex((e) => e.event === name && predicate(e.data));
        if (at >= 0) return queue.splice(0, at + 1).at(-1)!.data;
        await pull();
      }
    },
    next(name: string): Promise<unknown> {
      return this.nextWith(name, () => true);
    },
  };
}
