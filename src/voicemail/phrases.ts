/**
 * The words that tell a mailbox from a person in the first words heard on an
 * outbound call, in English, German, French, Spanish, Italian and Dutch, and
 * the one normalisation both the lists and the transcripts go through.
 *
 * Written as people say them (with accents and apostrophes); they are
 * normalised once when a detector is made, so a list reads like speech.
 */

export type PhraseLanguage = 'en' | 'de' | 'fr' | 'es' | 'it' | 'nl';

export interface LanguagePhrases {
  /**
   * Anywhere in the words, a mailbox: its greeting, a carrier's announcement,
   * or a person saying they cannot take the call (see detector.ts for why
   * "not available" counts even from a person).
   */
  readonly voicemail: readonly string[];
  /** What a person answers the phone with: the first words of a short utterance. */
  readonly openings: readonly string[];
  /** Anywhere in an utterance of a few words: a person talking to the caller (a question, their name). */
  readonly human: readonly string[];
  /**
   * A person giving their name, after an opening or not: "Guten Tag, hier ist
   * Frau Weber." Not "ich bin" or "it is": they start too many other sentences.
   */
  readonly introductions: readonly string[];
}

export const BUILTIN_PHRASES: Readonly<Record<PhraseLanguage, LanguagePhrases>> = {
  en: {
    voicemail: [
      'voicemail',
      'voice mail',
      'voice message',
      'mailbox',
      'answering machine',
      'not available',
      'unavailable',
      'is not available right now',
      'leave a message',
      'leave your message',
      'leave me a message',
      'leave a short message',
      'leave your name',
      'record your message',
      'after the tone',
      'after the beep',
      'at the tone',
      'at the beep',
      "you've reached",
      'you have reached',
      'you are trying to reach',
      "you're trying to reach",
      'person you are calling',
      'person you have called',
      'subscriber you have called',
      'subscriber you are calling',
      'number you have dialed',
      'number you have dialled',
      'number you have called',
      "can't take your call",
      'cannot take your call',
      'can not take your call',
      'unable to take your call',
      'not able to take your call',
      "can't come to the phone",
      'cannot come to the phone',
      'away from the phone',
      'away from my phone',
      'missed your call',
      'get back to you',
      'return your call',
      'not reachable',
      'cannot be reached',
      'please try again later',
    ],
    openings: ['hello', 'hi', 'hey', 'yes', 'yeah', 'yep', 'speaking', 'good morning', 'good afternoon', 'good evening'],
    human: [
      'who is this',
      "who's this",
      'who is it',
      'who is calling',
      "who's calling",
      'who is speaking',
      'speaking',
      'can i help you',
      'how can i help',
      'what can i do for you',
    ],
    introductions: ['this is', "it's", 'my name is'],
  },
  de: {
    voicemail: [
      'mailbox',
      'sprachbox',
      'anrufbeantworter',
      'sprachnachricht',
      'nicht erreichbar',
      'nicht zu erreichen',
      'hinterlassen sie eine nachricht',
      'hinterlassen sie mir eine nachricht',
      'hinterlass mir eine nachricht',
      'hinterlasse eine nachricht',
      'nachricht hinterlassen',
      'nach dem signalton',
      'nach dem piepton',
      'nach dem ton',
      'nach dem piep',
      'sprechen sie nach dem',
      'ist zurzeit nicht',
      'ist zur zeit nicht',
      'ist derzeit nicht',
      'ist im moment nicht',
      'ist gerade nicht',
      'ist leider nicht',
      'bin zurzeit nicht',
      'bin derzeit nicht',
      'bin im moment nicht',
      'bin gerade nicht',
      'gewünschte gesprächspartner',
      'gewünschte teilnehmer',
      'der teilnehmer',
      'die sie angerufen haben',
      'den sie angerufen haben',
      'die sie anrufen',
      'den sie anrufen',
      'gewählte rufnummer',
      'kein anschluss unter dieser nummer',
      'zurückrufen',
      'rufe sie zurück',
      'rufe dich zurück',
    ],
    openings: ['hallo', 'ja', 'ja bitte', 'ja hallo', 'guten tag', 'guten morgen', 'guten abend', 'grüß gott', 'servus', 'moin', 'tag'],
    human: ['wer ist da', 'wer spricht', 'wer ist dran', 'mit wem spreche ich', 'am apparat', 'was kann ich für sie tun', 'wie kann ich helfen'],
    introductions: ['hier ist', 'hier spricht', 'hier', 'mein name ist'],
  },
  fr: {
    voicemail: [
      'messagerie',
      'répondeur',
      'boîte vocale',
      'la personne que vous essayez de joindre',
      'que vous essayez de joindre',
      'votre correspondant',
      'le numéro que vous avez demandé',
      'laissez un message',
      'laissez votre message',
      'laissez-moi un message',
      'après le bip',
      'après le signal',
      "n'est pas disponible",
      'pas disponible',
      'indisponible',
      "n'est pas joignable",
      'pas joignable',
      'momentanément absent',
    ],
    openings: ['allô', 'allo', 'oui', 'bonjour', 'bonsoir', 'salut'],
    human: ["qui est à l'appareil", "c'est qui", 'qui est-ce', 'qui parle', 'de la part de qui'],
    introductions: ["c'est", 'ici'],
  },
  es: {
    voicemail: [
      'buzón de voz',
      'buzón',
      'contestador',
      'deje su mensaje',
      'deje un mensaje',
      'deja tu mensaje',
      'deja un mensaje',
      'después de la señal',
      'después del tono',
      'tras la señal',
      'no está disponible',
      'no se encuentra disponible',
      'fuera de cobertura',
      'no puedo atender',
      'el número que usted marcó',
    ],
    openings: ['hola', 'sí', 'diga', 'dígame', 'bueno', 'buenos días', 'buenas tardes', 'buenas noches'],
    human: ['quién es', 'quién habla', 'con quién hablo', 'quién llama'],
    introductions: ['soy', 'habla', 'le habla'],
  },
  it: {
    voicemail: [
      'segreteria telefonica',
      'casella vocale',
      'lasci un messaggio',
      'lascia un messaggio',
      'lasciate un messaggio',
      'dopo il segnale',
      'dopo il bip',
      'dopo il tono',
      'non è raggiungibile',
      'non raggiungibile',
      'non è disponibile',
      'non disponibile',
      'il cliente da lei chiamato',
      'il numero da lei chiamato',
    ],
    openings: ['pronto', 'sì', 'buongiorno', 'buonasera', 'ciao'],
    human: ['chi parla', 'chi è', 'chi sei', 'mi dica'],
    introductions: ['sono', 'parla'],
  },
  nl: {
    voicemail: [
      'voicemail',
      'spreek een bericht in',
      'spreek uw bericht in',
      'spreek je bericht in',
      'laat een bericht achter',
      'na de piep',
      'na de toon',
      'na het signaal',
      'niet bereikbaar',
      'niet beschikbaar',
      'is momenteel niet',
      'ben er even niet',
      'het nummer dat u gekozen hebt',
    ],
    openings: ['hallo', 'ja', 'goedemorgen', 'goedemiddag', 'goedenavond', 'dag'],
    human: ['met wie spreek ik', 'wie is dit', 'wie is daar', 'zeg het maar', 'waarmee kan ik u helpen'],
    introductions: ['met', 'u spreekt met', 'je spreekt met'],
  },
};

/** Phrases beyond the built-ins, as voicemail.yaml gives them. */
export interface ExtraPhrases {
  readonly voicemail: readonly string[];
  readonly human: readonly string[];
}

export const NO_EXTRA_PHRASES: ExtraPhrases = Object.freeze({ voicemail: Object.freeze([]), human: Object.freeze([]) });

/**
 * Lower case, letters and digits only, one space between words; accents and
 * umlauts folded to their base letter and ß to ss, because speech recognisers
 * differ in writing them and a phrase list should not have to list both.
 * Apostrophes join ("you've" → "youve"), other punctuation separates.
 */
export function normalizeSpeech(text: string): string {
  return text
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/['’‘`´]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
