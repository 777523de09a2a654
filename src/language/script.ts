/**
 * Writing systems: which one a text is in, and which one a language is written in. A text in a
 * script only one configured language uses needs no statistics to say which language it is.
 */

/**
 * Scripts a text is counted in (ISO 15924). Kana and Hangul stand for Japanese and Korean, whose
 * texts mix in Han characters; a text with Han alone is Chinese as far as this goes.
 */
const TEXT_SCRIPTS = [
  'Latn', 'Cyrl', 'Arab', 'Hebr', 'Grek', 'Hani', 'Hira', 'Kana', 'Hang', 'Thai', 'Deva', 'Beng',
  'Guru', 'Gujr', 'Taml', 'Telu', 'Knda', 'Mlym', 'Sinh', 'Armn', 'Geor', 'Ethi', 'Thaa', 'Laoo',
  'Khmr', 'Mymr',
] as const;

/** Scripts whose writers put no spaces between words, so that a run of letters is no word. */
const UNSPACED = new Set<string>(['Hani', 'Hira', 'Kana', 'Thai', 'Laoo', 'Khmr', 'Mymr']);

// One pass over the text: each alternative is a run of one script, told apart by its group.
const RUNS = new RegExp(TEXT_SCRIPTS.map((script) => `(\\p{Script=${script}}+)`).join('|'), 'gu');

export interface TextMeasure {
  /** Letters, in any of the scripts counted. */
  readonly letters: number;
  /** Words: runs of one script's letters, and in a script without spaces every two characters. */
  readonly words: number;
  /** The script most of the letters are in (`Jpan`, `Kore` for Japanese and Korean texts), if any. */
  readonly script: string | undefined;
}

/** Counts a text's letters and words, and finds the script most of them are in. */
export function measureText(text: string): TextMeasure {
  const counts = new Map<string, number>();
  let runs = 0;
  let unspaced = 0;
  for (const match of text.matchAll(RUNS)) {
    const script = TEXT_SCRIPTS[match.findIndex((run, index) => index > 0 && run !== undefined) - 1]!;
    const length = [...match[0]].length;
    counts.set(script, (counts.get(script) ?? 0) + length);
    if (UNSPACED.has(script)) unspaced += length;
    else runs += 1;
  }
  let letters = 0;
  for (const count of counts.values()) letters += count;
  return { letters, words: runs + Math.ceil(unspaced / 2), script: dominant(counts) };
}

function dominant(counts: ReadonlyMap<string, number>): string | undefined {
  const kana = (counts.get('Hira') ?? 0) + (counts.get('Kana') ?? 0);
  const folded = new Map<string, number>();
  for (const [script, count] of counts) {
    // Han characters in a text with kana or Hangul belong to the Japanese or Korean around them.
    const family =
      script === 'Hira' || script === 'Kana' || (script === 'Hani' && kana > 0)
        ? 'Jpan'
        : script === 'Hang' || (script === 'Hani' && (counts.get('Hang') ?? 0) > 0)
          ? 'Kore'
          : script;
    folded.set(family, (folded.get(family) ?? 0) + count);
  }
  let best: string | undefined;
  let bestCount = 0;
  for (const [script, count] of folded) {
    if (count > bestCount) [best, bestCount] = [script, count];
  }
  return best;
}

const languageScripts = new Map<string, string | undefined>();

/**
 * The script a language is written in, as `measureText` names a text's (`Cyrl` for ru, `Arab` for
 * ar, `Hani` for zh, `Jpan` for ja), from ICU's likely subtags; undefined for no language.
 */
export function scriptOfLanguage(language: string): string | undefined {
  if (languageScripts.has(language)) return languageScripts.get(language);
  let script: string | undefined;
  try {
    script = new Intl.Locale(language).maximize().script;
  } catch {
    script = undefined;
  }
  if (script === 'Hans' || script === 'Hant') script = 'Hani';
  languageScripts.set(language, script);
  return script;
}
