/**
 * Language tags as Hotline writes them: a prompt folder per language (`prompts/de/`,
 * `prompts/pt-BR/`), an ISO 639-1 code with an optional region. Everything asks ICU (`Intl`),
 * which Node ships in full, so no list of languages is kept here that could drift from it (only the
 * few codes ISO withdrew, below).
 */

/** ISO 639-1 language, then an ISO 3166 region or a UN M.49 area (`es-419`): the folder spelling. */
const FOLDER_NAME = /^([a-z]{2})(?:-([A-Z]{2}|\d{3}))?$/;

// Made when first asked: ICU takes tens of milliseconds to open its names, and not every process asks.
let englishLanguages: Intl.DisplayNames | undefined;
let englishRegions: Intl.DisplayNames | undefined;

/**
 * The region a bare language is most often heard in on the phone, for the ~25 most spoken
 * languages of Europe and the Middle East. Written out rather than left to ICU's likeliest region,
 * so that each choice can be seen and argued with; two differ from ICU's (pt, ar).
 */
const TRANSCRIPTION_REGIONS: Readonly<Record<string, string>> = {
  en: 'US',
  de: 'DE',
  fr: 'FR',
  es: 'ES',
  it: 'IT',
  // European Portuguese: ICU would say pt-BR. A Brazilian line names its folder pt-BR.
  pt: 'PT',
  nl: 'NL',
  pl: 'PL',
  ru: 'RU',
  uk: 'UA',
  tr: 'TR',
  // Recognisers list Modern Standard Arabic first as ar-SA; ICU says ar-EG, the most speakers, and
  // Egyptian is as common on the phone. A line for Egypt (or the Levant, ar-JO) names its folder so.
  ar: 'SA',
  fa: 'IR',
  he: 'IL',
  el: 'GR',
  ro: 'RO',
  hu: 'HU',
  cs: 'CZ',
  sk: 'SK',
  sv: 'SE',
  da: 'DK',
  nb: 'NO',
  fi: 'FI',
  bg: 'BG',
  hr: 'HR',
  sr: 'RS',
  sl: 'SI',
  sq: 'AL',
  ku: 'TR',
  az: 'AZ',
  hy: 'AM',
  ka: 'GE',
};

/** Scripts written right to left (ISO 15924). */
const RIGHT_TO_LEFT_SCRIPTS = new Set(['Arab', 'Hebr', 'Thaa', 'Syrc', 'Nkoo', 'Adlm', 'Rohg', 'Mand', 'Samr']);

/**
 * Codes ISO 639-1 withdrew, and what replaced them: one language should have one folder. ICU still
 * names them, and its own aliases go further than ISO (`tw` → `ak`), so they are listed here.
 */
const WITHDRAWN: Readonly<Record<string, string | undefined>> = {
  iw: 'he',
  in: 'id',
  ji: 'yi',
  jw: 'jv',
  mo: 'ro',
  sh: 'sr',
  bh: undefined,
};

function isKnownLanguage(code: string): boolean {
  englishLanguages ??= new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
  return !Object.hasOwn(WITHDRAWN, code) && englishLanguages.of(code) !== undefined;
}

function isKnownRegion(region: string): boolean {
  englishRegions ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  return region !== 'ZZ' && englishRegions.of(region) !== undefined;
}

/** True for a folder name that is a language, spelled as folders are: `de`, `de-AT`, `es-419`. */
export function isLanguageFolderName(name: string): boolean {
  const match = FOLDER_NAME.exec(name);
  if (!match) return false;
  const [, language, region] = match;
  return isKnownLanguage(language!) && (region === undefined || isKnownRegion(region));
}

/**
 * A tag as someone wrote it (`DE`, `de_de`, ` de-at `) in the folder spelling (`de`, `de-DE`,
 * `de-AT`); a withdrawn code becomes its successor (`iw` → `he`). Undefined when it is no
 * language, or has more than a language and a region.
 */
export function normaliseTag(tag: string): string | undefined {
  const parts = tag.trim().replaceAll('_', '-').split('-');
  if (parts.length > 2 || !/^[a-z]{2}$/i.test(parts[0]!)) return undefined;
  const written = parts[0]!.toLowerCase();
  const language = WITHDRAWN[written] ?? written;
  const region = parts[1]?.toUpperCase();
  const normalised = region === undefined ? language : `${language}-${region}`;
  return isLanguageFolderName(normalised) ? normalised : undefined;
}

/** The language without its region, lower case: `de-AT` → `de`. */
export function baseLanguage(tag: string): string {
  return tag.trim().replaceAll('_', '-').split('-')[0]!.toLowerCase();
}

/**
 * A full BCP-47 tag for a speech recogniser, which wants a region: a tag with one keeps it
 * (`de-AT`); a bare language gets the region it is most often heard in on the phone (`de` →
 * `de-DE`, `ar` → `ar-SA`), else ICU's likeliest, else the tag as it is.
 */
export function transcriptionTag(tag: string): string {
  const normalised = normaliseTag(tag);
  if (normalised === undefined) return tag;
  if (normalised.includes('-')) return normalised;
  const region = TRANSCRIPTION_REGIONS[normalised] ?? new Intl.Locale(normalised).maximize().region;
  return region === undefined ? normalised : `${normalised}-${region}`;
}

const displayNames = new Map<string, Intl.DisplayNames>();

/**
 * The language's name, in English by default ("German") or in another language ("Deutsch" with
 * `inLanguage` 'de'). A region shows as ICU says it ("Austrian German"). A tag that is no language
 * comes back as it was written: a name is for people to read, and the tag is what they wrote.
 */
export function languageName(tag: string, inLanguage = 'en'): string {
  const normalised = normaliseTag(tag);
  if (normalised === undefined) return tag;
  let names = displayNames.get(inLanguage);
  if (names === undefined) {
    names = new Intl.DisplayNames([inLanguage], { type: 'language' });
    displayNames.set(inLanguage, names);
  }
  return names.of(normalised) ?? tag;
}

/** True for a language written right to left (Arabic, Hebrew, Persian, Urdu, …). */
export function isRightToLeft(tag: string): boolean {
  // Any BCP-47 tag ICU reads, not only folder names: `ckb` (Sorani), `az-Arab`.
  let script: string | undefined;
  try {
    script = new Intl.Locale(tag.trim().replaceAll('_', '-')).maximize().script;
  } catch {
    return false;
  }
  return script !== undefined && RIGHT_TO_LEFT_SCRIPTS.has(script);
}
