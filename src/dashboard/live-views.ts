/** The live views open, by session: a logout closes its own at once. */
export class LiveViews {
  private readonly bySession = new Map<string, Set<() => void>>();

  /** Keeps a view's `close` under its session; what it returns forgets it again, once the view has closed. */
  open(session: string, close: () => void): () => void {
    const views = this.bySession.get(session) ?? new Set();
    this.bySession.set(session, views.add(close));
    return () => {
      views.delete(close);
      if (views.size === 0) this.bySession.delete(session);
    };
  }

  /** Closes every view of a session (none for undefined: no session was ended). */
  closeAll(session: string | undefined): void {
    for (const close of (session && this.bySession.get(session)) || []) close();
  }
}
