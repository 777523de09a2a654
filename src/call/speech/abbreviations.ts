/**
 * Word lists for the sentence chunker. Lookups are by the word before a `.`
 * (lower-cased, internal dots kept, e.g. `e.g`, `z.b`) or by the letters that
 * open the next word.
 */

/** Abbreviations that practically never end a sentence: a `.` after them is never a boundary. */
export const NEVER_FINAL = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'st', 'mt', 'sr', 'jr', 'nr', 'fig', 'eq', 'apt', 'fn', 'vs', 'cf', 'al',
  'e.g', 'i.e', 'ext', 'ref', 'approx', 'vol', 'pp',
  'z.b', 'd.h', 'u.a', 'bzw', 'vgl', 'ca', 'ggf', 'evtl', 'inkl', 'str', 'tel', 'hr', 'hrn', 'fr', 'abs',
]);

/**
 * Abbreviations that may also end a sentence: a boundary only when a typical
 * sentence starter follows. `no` and `sec` live here rather than in
 * NEVER_FINAL because a phone agent says "No. I'm sorry…" and "Just a sec.
 * Let me check…" far more often than it reads out "No. 5" — and "No. 5" /
 * "sec. 3" still hold together because a number is no sentence starter.
 */
export const SOFT_FINAL = new Set([
  'etc', 'inc', 'ltd', 'co', 'corp', 'cir', 'dept', 'ph.d', 'no', 'sec',
  'usw', 'mio', 'mrd', 'tsd',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'okt', 'nov', 'dec', 'dez',
]);

/** Clock-time abbreviations: followed by a capitalised word they usually end the sentence. */
export const TIME_SUFFIXES = new Set(['a.m', 'p.m']);

/**
 * Words that typically open a sentence (case-sensitive, compared with the
 * leading letters of the next word, so `It's` counts as `It`).
 */
export const SENTENCE_STARTERS = new Set([
  // English
  'I', 'It', 'He', 'She', 'They', 'We', 'You', 'This', 'That', 'These', 'Those', 'The', 'A', 'An',
  'Then', 'But', 'And', 'Or', 'So', 'There', 'Here', 'What', 'When', 'Where', 'Why', 'How', 'Who', 'Which',
  'Please', 'Thanks', 'Thank', 'Yes', 'No', 'Sure', 'Okay', 'Ok', 'OK', 'Let', 'Now', 'Also', 'However',
  'If', 'In', 'On', 'At', 'For', 'After', 'Before', 'My', 'Our', 'Your', 'His', 'Her', 'Their', 'Its',
  'Is', 'Are', 'Do', 'Does', 'Did', 'Can', 'Could', 'Would', 'Should', 'Will', 'Sorry', 'Unfortunately',
  'Great', 'Hello', 'Hi', 'Well', 'Just', 'One', 'Mr', 'Mrs', 'Ms', 'Dr', 'Prof',
  // German
  'Der', 'Die', 'Das', 'Den', 'Dem', 'Ein', 'Eine', 'Ich', 'Sie', 'Er', 'Es', 'Wir', 'Ihr', 'Du',
  'Dann', 'Aber', 'Und', 'Oder', 'Also', 'Bitte', 'Danke', 'Ja', 'Nein', 'Wenn', 'Was', 'Wie', 'Wo',
  'Warum', 'Wer', 'Hier', 'Da', 'Dies', 'Diese', 'Dieser', 'Mein', 'Meine', 'Unser', 'Unsere', 'Jetzt',
  'Gerne', 'Leider', 'Natürlich', 'Hallo', 'Kann', 'Können', 'Haben', 'Ist', 'Sind', 'Gut',
]);

/** Month names and their abbreviations (lower-cased): "der 3. Juli" is an ordinal date, not a sentence end. */
export const MONTHS = new Set([
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october',
  'november', 'december',
  'januar', 'jänner', 'februar', 'märz', 'maerz', 'mai', 'juni', 'juli', 'oktober', 'dezember',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'okt', 'nov', 'dec', 'dez',
]);

/**
 * German words that put a number in ordinal position ("im 2. Stock", "zum
 * 3. Mal"); after them "3." only ends the sentence before a sentence starter.
 */
export const ORDINAL_CONTEXT = new Set([
  'der', 'die', 'das', 'den', 'dem', 'des', 'am', 'im', 'zum', 'zur', 'vom', 'beim', 'ins',
]);

/** Longer than any word in the lists above; lookahead never needs more of the next word. */
export const MAX_LOOKAHEAD = 32;
