import { BUILTIN_PHRASES, normalizeSpeech, type ExtraPhrases } from './phrases.js';

/**
 * Tells a mailbox from a person by the words alone. The rules, in order:
 *
 * 1. Any mailbox phrase, anywhere → 'voicemail'. It wins over everything
 *    else because personal greetings start like a person ("Hi, this is
 *    Anna…") and only the mailbox phrase later gives them away.
 *    Decided on purpose: "not available" / "nicht erreichbar" count even when
 *    a person says them ("I'm not available right now, can you call back
 *    later?"). On the first words of an answered outbound call that is nearly
 *    always a mailbox, and when it is a person, the short message and goodbye
 *    is what they asked for; the other mistake, holding a conversation with a
 *    recording, is worse. Carrier announcements without a mailbox ("not
 *    reachable, please try again later") count too: nobody is there to talk to.
 * 2. One or two words → 'human': a greeting ("Hallo?"), a name ("Müller.",
 *    "Ja, Schmidt?"). Mailboxes say more, and say it at once.
 * 3. Up to four words starting with a greeting ("Hello, who's calling?",
 *    "Yes, this is Anna.") → 'human'.
 * 4. Up to twelve words with a phrase only a person on the line says ("who is
 *    this", "speaking", "am Apparat", or one of voicemail.yaml's human
 *    phrases), or up to eight words that introduce someone, after a greeting
 *    or not ("Guten Tag, hier ist Frau Weber.") → 'human'.
 * 5. Anything else → 'unsure': the model judges.
 *
 * A personal mailbox whose first recognised segment is only "Hallo, hier ist
 * Anna Schmidt." reads as a person by rule 4; its next segment, classified
 * with the first, gives it away by rule 1.
 */
export type Classification = 'voicemail' | 'human' | 'unsure';

const NAME_WORDS = 2;
const GREETING_WORDS = 4;
const INTRODUCTION_WORDS = 8;
const HUMAN_PHRASE_WORDS = 12;

/** The built-ins and voicemail.yaml's phrases, normalised: made once per phrase list, used for every call. */
export interface PhraseSet {
  readonly voicemail: readonly string[];
  readonly openings: readonly string[];
  readonly human: readonly string[];
  readonly introductions: readonly string[];
}

export function compilePhrases(extra: ExtraPhrases): PhraseSet {
  const languages = Object.values(BUILTIN_PHRASES);
  return {
    voicemail: normalizedSet([...languages.flatMap((l) => l.voicemail), ...extra.voicemail]),
    // Longest first: "ja bitte" is one opening, not "ja" followed by a name.
    openings: normalizedSet(languages.flatMap((l) => l.openings)).sort((a, b) => b.length - a.length),
    human: normalizedSet([...languages.flatMap((l) => l.human), ...extra.human]),
    introductions: normalizedSet(languages.flatMap((l) => l.introductions)),
  };
}

export function classifyWords(text: string, phrases: PhraseSet): Classification {
  const words = normalizeSpeech(text);
  if (words === '') return 'unsure';
  // Padded with spaces, so a phrase only matches whole words: "hi" is not in "this".
  const padded = ` ${words} `;
  const count = words.split(' ').length;
  if (phrases.voicemail.some((phrase) => padded.includes(` ${phrase} `))) return 'voicemail';
  if (count <= NAME_WORDS) return 'human';
  const afterGreeting = withoutOpenings(padded, phrases.openings);
  const greeted = afterGreeting.length < padded.length;
  if (greeted && count <= GREETING_WORDS) return 'human';
  if (count <= GREETING_WORDS && padded.endsWith(' hier ')) return 'human';
  if (count <= HUMAN_PHRASE_WORDS && phrases.human.some((phrase) => padded.includes(` ${phrase} `))) return 'human';
  if (count <= INTRODUCTION_WORDS && phrases.introductions.some((intro) => afterGreeting.startsWith(` ${intro} `))) return 'human';
  return 'unsure';
}

/** The words after any greetings they start with ("Hallo, guten Tag, hier ist …" → " hier ist … "), padded. */
function withoutOpenings(padded: string, openings: readonly string[]): string {
  let rest = padded;
  for (;;) {
    const opening = openings.find((o) => rest.startsWith(` ${o} `));
    if (opening === undefined) return rest;
    rest = rest.slice(opening.length + 1);
  }
}

function normalizedSet(phrases: readonly string[]): string[] {
  return [...new Set(phrases.map(normalizeSpeech).filter((p) => p !== ''))];
}
