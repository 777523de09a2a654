import { csvLines } from '../csv.js';
import type { StoredContact } from '../store/campaign-repository.js';

/** A campaign's contacts a page at a time, in order (see CampaignRepository.contactsAfter). */
export type ContactPages = (afterIndex: number, limit: number) => Promise<readonly StoredContact[]>;

/** Contacts read per page: a page costs a few milliseconds at most of this event loop (the rows parsed, the lines written). */
const PAGE = 500;

/**
 * A campaign's results, one row per contact: the number, what became of it
 * and the contact's own variables (one column each, in order of first
 * appearance), so the file goes back into a spreadsheet beside the original.
 * Made a page at a time, each read from the store on a turn of its own: the
 * variables' names first, then the rows — a list of a hundred thousand
 * contacts never holds the calls' event loop, nor memory, at once.
 */
export async function* resultsCsv(pages: ContactPages): AsyncGenerator<string> {
  const variableNames: string[] = [];
  const seen = new Set<string>();
  for (let after = -1; ; ) {
    const page = await pages(after, PAGE);
    if (page.length === 0) break;
    for (const contact of page) {
      for (const name of Object.keys(contact.variables)) {
        if (seen.has(name)) continue;
        seen.add(name);
        variableNames.push(name);
      }
    }
    after = page.at(-1)!.index;
  }
  yield csvLines([['phone', 'status', 'outcome', 'attempts', 'last_session_id', 'last_error', ...variableNames]]);
  for (let after = -1; ; ) {
    const page = await pages(after, PAGE);
    if (page.length === 0) return;
    yield csvLines(
      page.map((c) => [
        c.number,
        c.status,
        c.outcome ?? '',
        c.attempts,
        c.lastSessionId ?? '',
        c.lastError ?? '',
        ...variableNames.map((name) => c.variables[name] ?? ''),
      ]),
    );
    after = page.at(-1)!.index;
  }
}
