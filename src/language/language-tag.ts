// Placeholder until the language module lands: the same API, fewer languages.
const KNOWN = new Set(['en', 'de', 'tr', 'ar', 'fr', 'es', 'it', 'pl', 'ru', 'uk', 'nl', 'pt']);
export function isLanguageFolderName(name: string): boolean {
  return /^[a-z]{2}(-[A-Z]{2})?$/.test(name) && KNOWN.has(name.slice(0, 2));
}
export function normaliseTag(tag: string): string | undefined {
  const m = /^([a-zA-Z]{2})(?:[-_]([a-zA-Z]{2}))?$/.exec(tag.trim());
  if (!m || !KNOWN.has(m[1]!.toLowerCase())) return undefined;
  return m[2] ? `${m[1]!.toLowerCase()}-${m[2].toUpperCase()}` : m[1]!.toLowerCase();
}
export function baseLanguage(tag: string): string {
  return tag.slice(0, 2).toLowerCase();
}
export function transcriptionTag(tag: string): string {
  if (tag.includes('-')) return tag;
  return ({ en: 'en-US', de: 'de-DE', tr: 'tr-TR', ar: 'ar-SA' } as Record<string, string>)[tag] ?? tag;
}
