/**
 * The language module (src/language/): language tags and folder names, and which of a call's
 * languages a caller's utterance is in. The detection cases are a phone caller's: short questions,
 * names, "Ja", numbers, German with English product words.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  DEFAULT_MIN_CONFIDENCE,
  detectLanguage,
  languageDetectionState,
  prepareLanguageDetection,
  type DetectedLanguage,
} from '../src/language/detect.js';
import { loadEld } from '../src/language/eld-loader.js';
import { baseLanguage, isLanguageFolderName, isRightToLeft, languageName, normaliseTag, transcriptionTag } from '../src/language/language-tag.js';

const CLEAR: Readonly<Record<string, readonly string[]>> = {
  en: [
    'What are your opening hours on Saturday?',
    'Hi, I would like to know where my order is.',
    'Can I speak to someone about my invoice please?',
    'I ordered a jacket last week and it has not arrived yet.',
    'Hello, I am calling about the broken washing machine.',
    'Where is my parcel?',
    'My name is Anna Schmidt and I have a question.',
  ],
  de: [
    'Hallo, ich wollte fragen, wann Sie morgen geöffnet haben.',
    'Wo ist meine Bestellung?',
    'Ich möchte meinen Termin auf Dienstag verschieben.',
    'Meine Karte wurde zweimal belastet.',
    'Guten Tag, ich rufe wegen der kaputten Waschmaschine an.',
    'Ist das Geschäft am Samstag offen?',
  ],
  tr: [
    'Merhaba, siparişim ne zaman gelecek?',
    'Cumartesi günü saat kaçta açıksınız?',
    'Faturam hakkında biriyle konuşabilir miyim?',
    'Kargo ücreti ne kadar?',
    'Randevumu salı gününe değiştirmek istiyorum.',
    'Yarın sabah mağaza açık mı?',
  ],
  ar: [
    'مرحبا، متى تفتحون يوم السبت؟',
    'أين طلبي؟',
    'أريد أن أغير موعدي إلى يوم الثلاثاء.',
    'كم تكلفة التوصيل؟',
    'هل يمكنني التحدث مع شخص عن فاتورتي؟',
  ],
  ru: [
    'Здравствуйте, когда вы открыты?',
    'Где мой заказ?',
    'Я хочу перенести встречу на вторник.',
    'Сколько стоит доставка?',
    'С моей карты списали деньги два раза.',
  ],
  pl: [
    'Dzień dobry, chciałbym zapytać o moje zamówienie.',
    'Gdzie jest moja paczka?',
    'Chciałabym przełożyć wizytę na wtorek.',
    'Ile kosztuje dostawa?',
    'Czy mogę porozmawiać z kimś o fakturze?',
    'Czy sklep jest otwarty jutro rano?',
  ],
};

/** German as callers speak it, with the English words of the trade in it. */
const GERMAN_WITH_ENGLISH = [
  'Ich habe eine Frage zu meiner Order.',
  'Mein Account ist gesperrt, können Sie das checken?',
  'Ich brauche einen Reset von meinem Passwort.',
  'Kann ich das online canceln?',
  'Ich habe das Update installiert, aber die App startet nicht.',
];

/** Too little to tell a language by: any of the candidates may have said it. */
const AMBIGUOUS = [
  'OK', 'Okay', 'Ja', 'Nein', 'Ja, genau.', 'Ja bitte', '4711', 'Order 4711', 'Hallo', 'Hallo?', 'Hallo hallo', 'Mhm', 'Ähm',
  'Tschüss', 'Danke', 'Thanks', 'Yes please', 'Anna Schmidt', 'Peter Müller', 'Mehmet Yılmaz', 'iPhone 15 Pro', 'Tamam', 'Evet',
];

const CANDIDATE_SETS: readonly (readonly string[])[] = [['en', 'de', 'tr', 'ar'], ['en', 'de'], ['en', 'ru', 'pl']];

const confidenceOf = (detected: DetectedLanguage | undefined): number => detected?.confidence ?? 0;

describe('language folder names', () => {
  test.each(['de', 'en', 'tr', 'ar', 'de-AT', 'pt-BR', 'es-419', 'en-001', 'tl'])('%s is a language', (name) => {
    expect(isLanguageFolderName(name)).toBe(true);
  });

  test.each(['tools', 'sms', 'knowledge', 'audio', 'evals', 'examples', 'DE', 'de_at', 'de-at', 'xx', 'qq', 'zz', 'de-XX', 'de-ZZ', 'iw', 'sh', 'sr-Latn', 'deu', ''])(
    '%s is none',
    (name) => {
      expect(isLanguageFolderName(name)).toBe(false);
    },
  );
});

describe('language tags', () => {
  test.each([
    ['DE', 'de'],
    ['de_de', 'de-DE'],
    ['de-de', 'de-DE'],
    [' de ', 'de'],
    ['pt_br', 'pt-BR'],
    ['es-419', 'es-419'],
    // A withdrawn code is written as its successor.
    ['iw', 'he'],
  ])('%j is written %s', (written, normalised) => {
    expect(normaliseTag(written)).toBe(normalised);
  });

  test.each(['xx', 'tools', 'de-XX', 'de-AT-x', 'd', ''])('%j is no language', (written) => {
    expect(normaliseTag(written)).toBeUndefined();
  });

  test('the base language is the tag without its region, in lower case', () => {
    expect(baseLanguage('de-AT')).toBe('de');
    expect(baseLanguage('PT_br')).toBe('pt');
    expect(baseLanguage('tr')).toBe('tr');
  });

  test.each([
    ['en', 'en-US'],
    ['de', 'de-DE'],
    ['tr', 'tr-TR'],
    ['ar', 'ar-SA'],
    ['pl', 'pl-PL'],
    ['ru', 'ru-RU'],
    ['uk', 'uk-UA'],
    ['fr', 'fr-FR'],
    ['es', 'es-ES'],
    ['it', 'it-IT'],
    ['nl', 'nl-NL'],
    ['pt', 'pt-PT'],
    // A tag with a region keeps it.
    ['de-AT', 'de-AT'],
    ['de-at', 'de-AT'],
    ['ar-EG', 'ar-EG'],
    ['pt-BR', 'pt-BR'],
    // Beyond the list, ICU's likeliest region.
    ['ja', 'ja-JP'],
    ['sw', 'sw-TZ'],
  ])('a recogniser hears %s as %s', (tag, full) => {
    expect(transcriptionTag(tag)).toBe(full);
  });

  test('a tag that is no language goes to the recogniser as it is', () => {
    expect(transcriptionTag('xx')).toBe('xx');
  });

  test('a language is named in English, or in another language', () => {
    expect(languageName('de')).toBe('German');
    expect(languageName('de', 'de')).toBe('Deutsch');
    expect(languageName('tr', 'de')).toBe('Türkisch');
    expect(languageName('ar')).toBe('Arabic');
    expect(languageName('de-AT')).toBe('Austrian German');
    expect(languageName('xx')).toBe('xx');
  });

  test.each(['ar', 'ar-EG', 'he', 'fa', 'ur', 'ps', 'yi', 'ckb'])('%s is written right to left', (tag) => {
    expect(isRightToLeft(tag)).toBe(true);
  });

  test.each(['en', 'de', 'tr', 'ru', 'ku', 'xx', 'de_at'])('%s is not', (tag) => {
    expect(isRightToLeft(tag)).toBe(false);
  });
});

// Before the detector's data is asked for: these run first, whatever the state.
describe('language detection without the data', () => {
  test('with fewer than two candidates there is nothing to decide, and nothing is loaded', () => {
    const state = languageDetectionState();
    const german = 'Hallo, ich wollte fragen, wann Sie morgen geöffnet haben.';
    expect(detectLanguage(german, ['de'])).toBeUndefined();
    expect(detectLanguage(german, [])).toBeUndefined();
    expect(detectLanguage(german, ['de', 'de-AT'])).toBeUndefined();
    expect(languageDetectionState()).toBe(state);
  });

  test('a script just one candidate writes in tells the language by itself', () => {
    expect(detectLanguage('مرحبا، متى تفتحون يوم السبت؟', ['en', 'de', 'tr', 'ar'])).toEqual({ language: 'ar', confidence: 1 });
    expect(detectLanguage('Здравствуйте, когда вы открыты?', ['en', 'ru', 'pl'])).toEqual({ language: 'ru', confidence: 1 });
    expect(detectLanguage('שלום, מתי אתם פתוחים?', ['he', 'en'])).toEqual({ language: 'he', confidence: 1 });
  });
});

describe('language detection', () => {
  beforeAll(() => prepareLanguageDetection(), 60_000);

  test('the data is loaded', () => {
    expect(languageDetectionState()).toBe('ready');
  });

  for (const among of CANDIDATE_SETS) {
    for (const language of among.filter((candidate) => candidate in CLEAR)) {
      test.each(CLEAR[language]!)(`among ${among.join(', ')}: %s is ${language}`, (text) => {
        const detected = detectLanguage(text, among);
        expect(detected?.language).toBe(language);
        expect(detected!.confidence).toBeGreaterThanOrEqual(DEFAULT_MIN_CONFIDENCE);
      });
    }

    test.each(AMBIGUOUS)(`among ${among.join(', ')}: %j is no language to switch to`, (text) => {
      expect(confidenceOf(detectLanguage(text, among))).toBeLessThan(DEFAULT_MIN_CONFIDENCE);
    });
  }

  test.each(GERMAN_WITH_ENGLISH)('%s is still German', (text) => {
    for (const among of [['en', 'de'], ['en', 'de', 'tr', 'ar']]) {
      const detected = detectLanguage(text, among);
      expect(detected?.language).toBe('de');
      expect(detected!.confidence).toBeGreaterThanOrEqual(DEFAULT_MIN_CONFIDENCE);
    }
  });

  test('a language not among the candidates never comes out', () => {
    const texts = [...Object.values(CLEAR).flat(), ...GERMAN_WITH_ENGLISH, ...AMBIGUOUS];
    for (const among of [...CANDIDATE_SETS, ['tr', 'pl'], ['ar', 'ru'], ['fr', 'es', 'it']]) {
      for (const text of texts) {
        const detected = detectLanguage(text, among);
        if (detected) expect(among).toContain(detected.language);
      }
    }
  });

  test('a sentence in a language none of the candidates is does not switch to the nearest', () => {
    const elsewhere = [
      ['Bonjour, je voudrais savoir où est ma commande.', ['en', 'de']],
      ['Hola, quería saber dónde está mi pedido.', ['en', 'de', 'tr', 'ar']],
      ['Czy mogę porozmawiać z kimś o fakturze?', ['en', 'de', 'tr', 'ar']],
      ['Kargo takip numarasını bana gönderebilir misiniz?', ['en', 'ru', 'pl']],
      ['Ich möchte meinen Termin auf Dienstag verschieben.', ['en', 'ru', 'pl']],
    ] as const;
    for (const [text, among] of elsewhere) expect(confidenceOf(detectLanguage(text, among)), text).toBeLessThan(DEFAULT_MIN_CONFIDENCE);
  });

  test('a script no candidate writes in is no language of theirs', () => {
    expect(detectLanguage('Γεια σας, πότε ανοίγετε αύριο;', ['en', 'de'])).toBeUndefined();
    expect(detectLanguage('Здравствуйте, когда вы открыты?', ['en', 'de', 'tr', 'ar'])).toBeUndefined();
  });

  test('two candidates in one script are told apart by the statistics', () => {
    expect(detectLanguage('Я хочу перенести встречу на вторник.', ['en', 'ru', 'uk'])?.language).toBe('ru');
    expect(detectLanguage('Доброго дня, коли ви відчинені?', ['en', 'ru', 'uk'])?.language).toBe('uk');
  });

  test('a candidate comes back as it was given', () => {
    expect(detectLanguage('Ich möchte meinen Termin auf Dienstag verschieben.', ['en-GB', 'de-AT'])?.language).toBe('de-AT');
    expect(detectLanguage('Jeg vil gerne flytte min aftale til tirsdag, tak.', ['en', 'nb', 'da'])?.language).toBe('da');
    expect(detectLanguage('Jeg vil gjerne flytte avtalen min til tirsdag, takk.', ['en', 'nb', 'de'])?.language).toBe('nb');
  });

  test("the scores are eld's own, built from eld's module and read back from where the table is kept", async () => {
    const cacheDir = await mkdtemp(path.join(tmpdir(), 'hotline-eld-'));
    try {
      const built = await loadEld({ cacheDir });
      const kept = await loadEld({ cacheDir });
      expect([built.from, kept.from]).toEqual(['eld', 'cache']);
      const { eld } = await import('eld/small');
      const texts = [...Object.values(CLEAR).flat(), ...GERMAN_WITH_ENGLISH, ...AMBIGUOUS, '', 'x'.repeat(1500), 'Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherungsanstalt', '😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢'];
      for (const text of texts) {
        const theirs = eld.detect(text).getScores();
        for (const { score, from } of [built, kept]) {
          const squashed = Object.fromEntries(Object.entries(score(text)).map(([language, mean]) => [language, mean / (mean + 25)]));
          expect(Object.keys(squashed).sort(), `${from}: ${text}`).toEqual(Object.keys(theirs).sort());
          for (const [language, value] of Object.entries(theirs)) expect(squashed[language], `${from}: ${text}: ${language}`).toBeCloseTo(value, 12);
        }
      }
    } finally {
      await rm(cacheDir, { recursive: true, force: true });
    }
  }, 60_000);

  test('a kept table cut short, of another layout or pointing out of itself is built again from eld and written whole', async () => {
    const cacheDir = await mkdtemp(path.join(tmpdir(), 'hotline-eld-'));
    try {
      const first = await loadEld({ cacheDir });
      const [name] = await readdir(cacheDir);
      const file = path.join(cacheDir, name!);
      const whole = await readFile(file);
      expect(name).toMatch(/^eld-2\.1\.\d+-small\.table$/);
      // Cut short; of another layout; whole, but its last slots pointing past the n-grams (a lookup would leave the table).
      const pointingOut = Buffer.concat([whole.subarray(0, whole.length - 4096), Buffer.alloc(4096, 1)]);
      for (const damaged of [whole.subarray(0, whole.length - 1000), Buffer.from('hotline-eld-table-0\n{}'), pointingOut]) {
        await writeFile(file, damaged);
        const again = await loadEld({ cacheDir });
        expect(again.from).toBe('eld');
        expect(again.score('Wo ist meine Bestellung?')).toEqual(first.score('Wo ist meine Bestellung?'));
        expect((await readFile(file)).equals(whole)).toBe(true);
      }
      expect(await readdir(cacheDir)).toEqual([name]);
    } finally {
      await rm(cacheDir, { recursive: true, force: true });
    }
  }, 60_000);
});
