/**
 * The dashboard's long-lived responses open in this process (the live view's event stream, an
 * export being written), by session and by person: a logout closes its session's at once, and an
 * account found removed or given another role closes every one of that person's.
 */
export class OpenStreams {
  private readonly bySession = new Map<string, Set<() => void>>();
  private readonly byPerson = new Map<string, Set<() => void>>();

  /** Keeps a stream's `close` under its session and person; what it returns forgets it again, once the stream has closed. */
  open(session: string, person: string, close: () => void): () => void {
    add(this.bySession, session, close);
    add(this.byPerson, person, close);
    return () => {
      remove(this.bySession, session, close);
      remove(this.byPerson, person, close);
    };
  }

  /** Closes every stream of a session (none for undefined: no session was ended). */
  closeSession(session: string | undefined): void {
    for (const close of [...((session && this.bySession.get(session)) || [])]) close();
  }

  /** Closes every stream of a person, whichever session opened it. */
  closePerson(person: string): void {
    for (const close of [...(this.byPerson.get(person) ?? [])]) close();
  }
}

function add(map: Map<string, Set<() => void>>, key: string, close: () => void): void {
  map.set(key, (map.get(key) ?? new Set()).add(close));
}

function remove(map: Map<string, Set<() => void>>, key: string, close: () => void): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(close);
  if (set.size === 0) map.delete(key);
}
