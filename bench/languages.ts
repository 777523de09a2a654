/**
 * The languages phase: what a language per call and the business's pronunciations cost a turn.
 *
 * - First-speak overhead with both off and both on: two Hotlines side by side (first-speak.ts's
 *   machinery, a fixture each), warmed up, each level measured in rounds taken in turn on one and
 *   right after on the other (off, on, on, off, …), each side's rounds pooled.
 *   off: LANGUAGES=false, CONFIGURE_TRANSCRIPTION=false, a copy of the shipped prompts without
 *   language folders, languages.yaml or pronunciations.yaml. on: LANGUAGES=true,
 *   CONFIGURE_TRANSCRIPTION=true, the same prompts with the shipped de/ folder, a small tr/ one, the
 *   shipped languages.yaml (detect: true) and a pronunciations.yaml of 40 entries
 *   (BENCH_PRONUNCIATIONS), several of them words of the scripted model's replies. Both have
 *   KNOWLEDGE=false: the shipped documents would add their lookup to every turn alike.
 * - The callers ask in English, and every fourth turn in German (languageWords): on the 'on' side
 *   detection runs on every turn before its LLM request, and switches the call to German and back.
 *   Besides the overhead, the caller's words → the LLM request's arrival and → its first token
 *   (where detection and a switch would show), the speaks the pronunciations rewrote (each heard
 *   speak set against the sentence the model wrote, as the chunker cuts it), and the turns that
 *   switched language apart from those that did not.
 * - Micro-figures, on the bench's thread before any Hotline starts: detectLanguage on the callers'
 *   utterances among en, de and tr, and the 40-entry pronouncer's text() on a 120-character
 *   sentence, with and without names in it.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { CallLanguage } from '../src/call/call-language.js';
import { CallPrompts } from '../src/call/call-prompts.js';
import { CallRecord } from '../src/call/call-record.js';
import { NO_CALL_TRACE } from '../src/call/ports/tracing.js';
import type { TranscriptLog } from '../src/call/ports/transcript.js';
import { SentenceChunker } from '../src/call/speech/chunker.js';
import { toSpeech } from '../src/call/speech/speech-text.js';
import { DEFAULT_MIN_CONFIDENCE, detectLanguage, prepareLanguageDetection } from '../src/language/detect.js';
import { isLanguageFolderName } from '../src/language/language-tag.js';
import { tokenize } from '../src/llm/tokenize.js';
import { loadFolder } from '../src/prompts/folder-load.js';
import { buildPromptSet } from '../src/prompts/prompt-set.js';
import type { Pronouncer } from '../src/prompts/pronunciations.js';
import { parsePronunciations } from '../src/prompts/pronunciations-file.js';
import { now, sleep } from './clock.js';
import { cleanUpOnExit, removeQuietly } from './exit-cleanup.js';
import { analyzeReplies, runTalkingCalls, type FirstSpeakLevel, type TalkOptions, type TalkRun } from './first-speak.js';
import type { LoopFigures } from './hotline-probes.js';
import { BenchFixture, type FixtureOptions, type HeardSpeak, type ReplyInfo } from './llm-fixture.js';
import { idOf, replyText } from './replies.js';
import { summarize, type Summary } from './stats.js';
import { warmUp } from './warm-up.js';

/** The shipped prompts folder, which both Hotlines' folders are copied from. */
const SHIPPED_PROMPTS = path.resolve(import.meta.dirname, '..', 'prompts');
/** What the copies leave out besides the language folders: the documents and the evals are not the call path's. */
const LEFT_OUT = new Set(['languages.yaml', 'pronunciations.yaml', 'knowledge', 'evals']);

/**
 * The 'on' Hotline's pronunciations.yaml: a coffee machine shop's names, and seven entries that
 * the scripted model's replies (replies.ts) hold — Dr. Meyer, Meyer, e-mail, email, callback,
 * a.m., p.m. — so a quarter of the speaks are rewritten on their way out.
 */
export const BENCH_PRONUNCIATIONS = `# The bench's pronunciations (bench/languages.ts): a coffee machine shop's names, and words of the
# scripted model's replies, so that speaks are rewritten on their way out.
Dr. Meyer: Doctor Myer
Meyer: Myer
e-mail: ee mail
email: ee mail
callback: call back
/\\ba\\.m\\./: in the morning
/\\bp\\.m\\./: in the evening
sipgate: sip gate
Müller-Lüdenscheidt: Müller Lüdenscheid
Nguyen: { say: Nwin, ipa: "ŋwiən" }
Potsdam: { ipa: "ˈpɔtsdam" }
De'Longhi: de longy
Jura: yoo ra
Siebträger: seeb tray ger
Gaggia: gah jah
Rancilio: ran chee lee oh
La Marzocco: la mar tsoh ko
Rocket Espresso: rocket es press oh
Melitta: meh lit ta
Krups: kroops
Bialetti: bee ah let tee
Illy: ill ee
Lavazza: la vat sa
Tchibo: chee bo
Dallmayr: dal my er
WMF: double u em eff
Miele: mee leh
Nespresso: ness press oh
Nivona: nee vo na
Saeco: sah eh ko
Baratza: ba rat sa
Mahlkönig: mahl ker nig
Quickmill: quick mill
Eureka Mignon: { say: yoo ree ka min yon, ipa: "juˈriːkə miˈɲɔn" }
Kaffeevollautomat: kaf fay foll ow toh maht
Entkalker: ent kal ker
/\\bGmbH\\b/: G m b H
/\\bMarket St\\b/: Market Street
/\\bNr\\.\\s?(?=\\d)/: number
/\\bKW(?=\\s?\\d)/: calendar week
`;

/** The 'on' Hotline's Turkish folder: its own system prompt and voice, the rest the default folder's. */
const TURKISH_FILES: Readonly<Record<string, string>> = {
  'system.md': `---
tts: { provider: azure, language: tr-TR, voice: tr-TR-EmelNeural }
silence: { timeout_seconds: 8, reprompts: 2 }
keypad: { end_key: "#", pause_ms: 3000, max_digits: 20 }
---
Küçük bir işletmenin telefon asistanısın. Arayanlarla telefonda konuşuyorsun ve Türkçe konuşuyorsun.

Nasıl konuşursun:
- Yazdığın her şey bir ses tarafından okunur. Sade, konuşma dilinde cümleler yaz: liste, emoji ya da bağlantı yok.
- Kısa cevap ver: bir ile üç cümle. Her seferinde tek bir soru sor.
- Kibar, sakin ve açık ol. Bir şeyi anlamadıysan söyle ve tekrar sor.
- Fiyat, çalışma saati ya da söz uydurma. Bunun yerine arayanı bir çalışanla bağlamayı teklif et.

Bu arama hakkında:
- Yön: {{direction}}.
- Tarih: {{date}}, yerel saat: {{time}}.
- Arayan numara: {{caller_number|bilinmiyor}}. Aranan numara: {{called_number|bilinmiyor}}.
`,
  'greeting.md': 'Merhaba, aradığınız için teşekkürler! Size nasıl yardımcı olabilirim?\n',
  'thinking.md': 'Bir dakika, hemen bakıyorum.\n',
};

/** What the callers say in English; the tag is the reply's (replies.ts). */
const ENGLISH: readonly string[] = [
  'can you help me with my appointment?',
  'when will my order arrive, it has been a week?',
  'could you tell me how late you are open today?',
  'I would like a callback from someone, please.',
];

/** …and in German, every fourth turn. */
const GERMAN: readonly string[] = [
  'Ich möchte meinen Termin am Donnerstag verschieben, geht das?',
  'Wann kommt meine Bestellung an, sie ist seit einer Woche unterwegs?',
  'Können Sie mir bitte sagen, wie lange Sie heute geöffnet haben?',
  'Ich hätte gern einen Rückruf von einem Ihrer Mitarbeiter, bitte.',
];

/**
 * Whether the id-th reply is asked for in German: one turn in four, spread over the four reply
 * templates (the id also picks the template, replies.ts), so the German turns get every kind of reply.
 */
export function isGermanTurn(id: number): boolean {
  return (id + Math.floor(id / 4)) % 4 === 3;
}

/** What a caller says to ask for the tagged reply: the same words for the same reply id on both Hotlines. */
export function languageWords(tag: string): string {
  const id = idOf(tag);
  const pick = Math.floor(id / 4);
  return isGermanTurn(id) ? `Frage ${tag}: ${GERMAN[pick % GERMAN.length]}` : `Question ${tag}: ${ENGLISH[pick % ENGLISH.length]}`;
}

/** The candidates a call of the 'on' Hotline detects among: its folders' languages. */
const CANDIDATES = ['en', 'de', 'tr'];

/** The two prompts folders, in a temp folder removed by remove(). */
export class LanguagePrompts {
  private constructor(
    private readonly root: string,
    readonly off: string,
    readonly on: string,
    private readonly forget: () => void,
  ) {}

  static async write(): Promise<LanguagePrompts> {
    const root = await mkdtemp(path.join(tmpdir(), 'hotline-bench-languages-'));
    const forget = cleanUpOnExit(() => removeQuietly(root));
    try {
      const off = path.join(root, 'off');
      const on = path.join(root, 'on');
      const plain = (source: string): boolean => {
        const relative = path.relative(SHIPPED_PROMPTS, source);
        const first = relative.split(path.sep)[0] ?? '';
        return relative === '' || !(LEFT_OUT.has(first) || isLanguageFolderName(first));
      };
      for (const dir of [off, on]) await cp(SHIPPED_PROMPTS, dir, { recursive: true, filter: plain });
      await cp(path.join(SHIPPED_PROMPTS, 'de'), path.join(on, 'de'), { recursive: true });
      await cp(path.join(SHIPPED_PROMPTS, 'languages.yaml'), path.join(on, 'languages.yaml'));
      await writeFile(path.join(on, 'pronunciations.yaml'), BENCH_PRONUNCIATIONS);
      await mkdir(path.join(on, 'tr'));
      for (const [file, text] of Object.entries(TURKISH_FILES)) await writeFile(path.join(on, 'tr', file), text);
      return new LanguagePrompts(root, off, on, forget);
    } catch (error) {
      await rm(root, { recursive: true, force: true });
      forget();
      throw error;
    }
  }

  async remove(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
    this.forget();
  }
}

/** The bench's pronouncer, as the 'on' Hotline reads it (no language folder has one of its own). */
export function benchPronouncer(): Pronouncer {
  const { pronouncer, problems } = parsePronunciations(BENCH_PRONUNCIATIONS, 'pronunciations.yaml');
  if (problems.length > 0) throw new Error(`the bench's pronunciations.yaml: ${problems.map((p) => p.message).join('; ')}`);
  return pronouncer;
}

// ---------------------------------------------------------------------------------------------
// Micro-figures

export interface MicroCosts {
  /** detectLanguage(utterance, en/de/tr), over the callers' utterances in turn: µs a call. */
  detect: { medianUs: number; p90Us: number; utterances: number; meanChars: number };
  /**
   * A call's CallLanguage.heard() on the 'on' prompts, as a call runs it before each turn (its record,
   * transcript and trace doing nothing): the caller staying in English, and switching between English
   * and German every time (the German system prompt rendered, a configure_transcription made).
   */
  heard: { staying: { medianUs: number; p90Us: number }; switching: { medianUs: number; p90Us: number } };
  /** The bench's pronouncer's text() on a 120-character sentence: µs a call. */
  pronounce: {
    entries: number;
    /** With three of its names in it (two rewritten: Potsdam has only ipa). */
    withNames: { chars: number; medianUs: number; p90Us: number };
    /** With none: most sentences of a call. */
    withoutNames: { chars: number; medianUs: number; p90Us: number };
  };
  /** Each figure is the median of this many batches' means, of `perBatch` calls each, after as many untimed. */
  batches: number;
  perBatch: number;
}

/** 120 characters with names of the bench's pronunciations in it. */
export const SENTENCE_WITH_NAMES = "Your De'Longhi from our Potsdam shop is ready for pickup, and the e-mail with the times follows before six this evening.";
/** 120 characters without any. */
export const SENTENCE_WITHOUT_NAMES = 'Thanks for waiting, I found your order in our system, and it should arrive within two or three business days from today.';

/** µs a call of `work(i)`, as the median and p90 of `batches` batches' means (after as many untimed). */
function timePerCall(batches: number, perBatch: number, work: (i: number) => number): { medianUs: number; p90Us: number } {
  let sink = 0;
  for (let i = 0; i < batches * perBatch; i++) sink += work(i);
  const means: number[] = [];
  for (let b = 0; b < batches; b++) {
    const started = performance.now();
    for (let i = 0; i < perBatch; i++) sink += work(b * perBatch + i);
    means.push(((performance.now() - started) * 1000) / perBatch);
  }
  // Kept, so the work cannot be left out as unused.
  if (sink === Number.MIN_VALUE) console.log(sink);
  const s = summarize(means);
  return { medianUs: s.p50, p90Us: s.p90 };
}

/** A transcript that keeps nothing: the language's events cost only their making. */
const NO_TRANSCRIPT: TranscriptLog = {
  file: '',
  append: () => undefined,
  holdFrom: () => undefined,
  amend: () => undefined,
  close: () => Promise.resolve(),
  discard: () => undefined,
};

/** A call's language on the prompts of `dir`, begun in the default language; `sent` counts the actions it sends. */
async function callLanguageOn(dir: string): Promise<{ language: CallLanguage; prompts: CallPrompts; sent: () => number }> {
  const log = pino({ level: 'silent' });
  const prompts = new CallPrompts(buildPromptSet(await loadFolder(dir), log), undefined, log);
  prompts.begin({ from_phone_number: '4915112345678', to_phone_number: '4930123456', direction: 'inbound' }, undefined);
  let sent = 0;
  const language = new CallLanguage({
    sessionId: 'bench',
    log,
    prompts,
    record: new CallRecord('bench', NO_TRANSCRIPT),
    transcript: NO_TRANSCRIPT,
    trace: NO_CALL_TRACE,
    detector: { minConfidence: DEFAULT_MIN_CONFIDENCE, detect: detectLanguage },
    perCall: true,
    configure: true,
    send: () => void (sent += 1),
  });
  language.begin(true, '4930123456', undefined);
  return { language, prompts, sent: () => sent };
}

/**
 * The pieces of work the features add to a turn, timed alone on this thread: run it before any
 * Hotline starts, while the thread has its priority (BenchFixture.start gives it away). `onPrompts`:
 * the 'on' Hotline's prompts folder.
 */
export async function measureLanguageCosts(batches: number, onPrompts: string): Promise<MicroCosts> {
  await prepareLanguageDetection();
  const utterances = Array.from({ length: 16 }, (_, i) => languageWords(`Zq${(1000 + i).toString(36)}`));
  const perBatch = 100;
  const detect = timePerCall(batches, perBatch, (i) => detectLanguage(utterances[i % utterances.length]!, CANDIDATES)?.confidence ?? 0);
  const english = utterances.filter((u) => u.startsWith('Question '));
  const german = utterances.filter((u) => u.startsWith('Frage '));
  const staying = await callLanguageOn(onPrompts);
  const stayingUs = timePerCall(batches, perBatch, (i) => {
    staying.language.heard(english[i % english.length]!);
    return staying.prompts.language === 'en' ? 1 : 0;
  });
  const switching = await callLanguageOn(onPrompts);
  const switchingUs = timePerCall(batches, perBatch, (i) => {
    switching.language.heard(i % 2 === 0 ? german[(i >> 1) % german.length]! : english[(i >> 1) % english.length]!);
    return switching.prompts.system.text.length;
  });
  // Every heard() switched, and said so to the recogniser; none of the staying ones did.
  const asked = 2 * batches * perBatch;
  if (switching.sent() !== asked + 1 || staying.sent() !== 1) {
    throw new Error(`the timed calls switched ${switching.sent() - 1} times of ${asked}, and ${staying.sent() - 1} times staying`);
  }
  const pronouncer = benchPronouncer();
  const pronounce = (sentence: string): { chars: number; medianUs: number; p90Us: number } => ({
    chars: sentence.length,
    ...timePerCall(batches, perBatch * 10, () => pronouncer.text(sentence).length),
  });
  return {
    detect: { ...detect, utterances: utterances.length, meanChars: utterances.reduce((sum, u) => sum + u.length, 0) / utterances.length },
    heard: { staying: stayingUs, switching: switchingUs },
    pronounce: { entries: pronouncer.size, withNames: pronounce(SENTENCE_WITH_NAMES), withoutNames: pronounce(SENTENCE_WITHOUT_NAMES) },
    batches,
    perBatch,
  };
}

// ---------------------------------------------------------------------------------------------
// First-speak overhead, off and on

export interface LanguagesFirstSpeakOptions {
  /** Talking calls per level. */
  levels: readonly number[];
  /** Turns per call of each round. */
  turnsFor: (calls: number) => number;
  /** Rounds per side and level, in the order off, on, on, off, …: the machine's ups and downs fall on both sides alike. */
  rounds: number;
  warmUp: { calls: number; turns: number };
  talk: Omit<TalkOptions, 'calls' | 'turns' | 'idPrefix' | 'words'>;
  fixture: Omit<FixtureOptions, 'env' | 'storedCalls'>;
  progress: (message: string) => void;
}

/** A group of a side's turns. */
export interface TurnFigures {
  replies: number;
  /** The caller's words sent → the LLM server began to receive the turn's request. */
  requestMs: Summary;
  /** → its first token written (the LLM's own time to it included). */
  firstTokenMs: Summary;
  /** First-speak overhead of the group's speaks. */
  overheadMs: Summary;
}

/** The speaks of traced replies as their callers heard them, set against the sentences the model wrote. */
export interface SpeechCheck {
  /** Speaks of complete replies. */
  speaks: number;
  /** Not the sentence as the model wrote it (the chunker's sentence, before pronunciations). */
  rewritten: number;
  /** As this side should say it: the sentence unchanged (off), the bench's pronouncer's text of it (on). */
  asExpected: number;
  /** A few rewritten speaks: the sentence written, the sentence said. */
  samples: { wrote: string; said: string }[];
  /** A few speaks not as expected, with what was expected: any makes the count above suspect. */
  unexpected: { expected: string; said: string }[];
  /** Complete replies by the language of their voice (a folder's tts language; en: the default's, no tts). */
  answeredIn: Record<string, number>;
  /** Complete replies asked for in German. */
  germanWords: number;
}

/** One round of a side, to set the difference between the sides against the spread between its rounds. */
export interface RoundFigures {
  overheadP50Ms: number;
  overheadP99Ms: number;
  requestP50Ms: number;
  durationS: number;
  /** The machine's one-minute load average as the round began: other programs' work is in its figures. */
  loadAverage: number;
}

/**
 * The rounds of one side pooled: measureLevel's figures over all their replies (turns: all rounds'
 * turns per call; eventLoop: the worst round's p99 and max, the busy share over all).
 */
export interface LanguagesSide extends FirstSpeakLevel {
  rounds: RoundFigures[];
  speech: SpeechCheck;
  /** Turns answered in the language the call's previous answer was in (the first turn: in English, the calls' start). */
  stayed: TurnFigures;
  /** Turns answered in another: the caller's words switched the call before the request. */
  switched: TurnFigures;
}

export interface LanguagesLevel {
  calls: number;
  /** Turns per call of each round. */
  turnsPerRound: number;
  off: LanguagesSide;
  on: LanguagesSide;
}

export interface LanguagesFirstSpeak {
  note: string;
  /** Hotline's start, from the thread's spawn to listening. */
  startSeconds: { off: number; on: number };
  /**
   * Calls of one German turn the 'on' Hotline took, after its warm-up, to answer one in German: its
   * detector loads its data on the first detection, and switches no caller until then.
   */
  detectionAsks: number;
  levels: LanguagesLevel[];
  callersNice: number | undefined;
}

export interface LanguagesBenchResult {
  note: string;
  /** The 'on' Hotline's pronunciations.yaml: entries, of them regular expressions, and those the replies hold. */
  pronunciations: { entries: number; regexes: number; inReplies: string[] };
  micro?: MicroCosts;
  firstSpeak?: LanguagesFirstSpeak;
}

export const LANGUAGES_NOTE =
  'Two Hotlines side by side (a fixture each, warmed up), each level measured in rounds, off, on, on, off, … (each side as ' +
  "often first as second, so the machine's ups and downs fall on both alike), a side's rounds pooled. off: LANGUAGES=false, " +
  'CONFIGURE_TRANSCRIPTION=false, a copy of the shipped prompts without language folders, languages.yaml or ' +
  'pronunciations.yaml. on: LANGUAGES=true, CONFIGURE_TRANSCRIPTION=true, the same prompts with the shipped de/, a small tr/, ' +
  "languages.yaml (detect: true) and a pronunciations.yaml of 40 entries, several of them words of the model's replies. " +
  "KNOWLEDGE=false on both. The callers ask in English and every fourth turn in German: on 'on' detection runs on every " +
  'turn before its request, and a German turn switches the call to German (its prompts, its voice, a ' +
  'configure_transcription) until an English one switches it back; the scripted model answers in English either way. ' +
  "words → request = the caller's words sent → the LLM server began to receive the turn's request; → 1st token adds the " +
  "LLM's own 300 ms. A switched turn's configure_transcription reaches the callers' thread just before its request: " +
  'without --llm-thread that thread is the LLM server\'s too, and reads it first.';

/** The sentences Hotline speaks of a reply, as the model wrote them: its chunker's, through its speech filter. */
function writtenSentences(tag: string): string[] {
  const chunker = new SentenceChunker();
  const out: string[] = [];
  for (const token of tokenize(replyText(tag))) for (const chunk of chunker.push(token)) out.push(toSpeech(chunk));
  for (const chunk of chunker.flush()) out.push(toSpeech(chunk));
  return out.filter((sentence) => sentence !== '');
}

/** The language a speak's voice says, as a base code; en where it names none (the default folder's system.md). */
function voiceLanguage(tts: HeardSpeak['tts']): string {
  return typeof tts?.language === 'string' ? tts.language.split('-')[0]!.toLowerCase() : 'en';
}

/** What the callers of one side's rounds heard of each traced reply, and in what order each caller's replies came. */
class HeardLog {
  readonly texts = new Map<string, string[]>();
  readonly languages = new Map<string, string>();
  readonly byCaller = new Map<string, string[]>();

  add(reply: ReplyInfo, speak: HeardSpeak): void {
    let texts = this.texts.get(reply.tag);
    if (!texts) {
      texts = [];
      this.texts.set(reply.tag, texts);
      this.languages.set(reply.tag, voiceLanguage(speak.tts));
      const order = this.byCaller.get(speak.caller) ?? [];
      order.push(reply.tag);
      this.byCaller.set(speak.caller, order);
    }
    texts.push(speak.text);
  }

  /** Tags of the replies answered in another language than the same call's previous one. */
  switched(): Set<string> {
    const out = new Set<string>();
    for (const order of this.byCaller.values()) {
      let previous = 'en';
      for (const tag of order) {
        const language = this.languages.get(tag) ?? 'en';
        if (language !== previous) out.add(tag);
        previous = language;
      }
    }
    return out;
  }
}

function complete(reply: ReplyInfo): boolean {
  return reply.tokens.length > 0 && reply.arrivals.length === reply.expected && reply.left.length === reply.expected;
}

function turnFigures(replies: readonly ReplyInfo[]): TurnFigures {
  const analysis = analyzeReplies(replies);
  return {
    replies: analysis.replies,
    requestMs: analysis.timeToFirstSpeak.llmRequestMs,
    firstTokenMs: analysis.timeToFirstSpeak.llmFirstTokenMs,
    overheadMs: analysis.overheadMs,
  };
}

/** Sets each heard speak against the sentence written, and what this side should have made of it. */
function checkSpeech(replies: readonly ReplyInfo[], heard: HeardLog, pronouncer: Pronouncer | undefined): SpeechCheck {
  const check: SpeechCheck = { speaks: 0, rewritten: 0, asExpected: 0, samples: [], unexpected: [], answeredIn: {}, germanWords: 0 };
  for (const reply of replies) {
    const said = heard.texts.get(reply.tag);
    if (!said || !complete(reply)) continue;
    if (isGermanTurn(idOf(reply.tag))) check.germanWords++;
    const language = heard.languages.get(reply.tag) ?? 'en';
    check.answeredIn[language] = (check.answeredIn[language] ?? 0) + 1;
    const wrote = writtenSentences(reply.tag);
    said.forEach((text, k) => {
      const sentence = wrote[k] ?? '';
      const expected = pronouncer ? pronouncer.text(sentence) : sentence;
      check.speaks++;
      if (text !== sentence) {
        check.rewritten++;
        // One of each sentence kind: the same sentence of another reply differs only by its tag.
        if (check.samples.length < 4 && !check.samples.some((s) => s.wrote.replaceAll(/Zq[0-9a-z]+/g, '') === sentence.replaceAll(/Zq[0-9a-z]+/g, ''))) {
          check.samples.push({ wrote: sentence, said: text });
        }
      }
      if (text === expected) check.asExpected++;
      else if (check.unexpected.length < 3) check.unexpected.push({ expected, said: text });
    });
  }
  return check;
}

/** A side's rounds as one: their loops' worst p99 and max, their busy share weighted by their time. */
function pooledLoop(runs: readonly TalkRun[]): LoopFigures {
  const loops = runs.map((run) => run.eventLoop);
  const time = runs.reduce((sum, run) => sum + run.durationS, 0);
  return {
    p50Ms: loops.reduce((sum, loop) => sum + loop.p50Ms, 0) / Math.max(1, loops.length),
    p99Ms: Math.max(...loops.map((loop) => loop.p99Ms)),
    maxMs: Math.max(...loops.map((loop) => loop.maxMs)),
    utilization: runs.reduce((sum, run) => sum + run.eventLoop.utilization * run.durationS, 0) / Math.max(Number.MIN_VALUE, time),
    gcPauseMaxMs: Math.max(0, ...loops.map((loop) => loop.gcPauseMaxMs ?? 0)),
    gcPauseTotalMs: loops.reduce((sum, loop) => sum + (loop.gcPauseTotalMs ?? 0), 0),
  };
}

/** One side of a level: its rounds' replies pooled into measureLevel's figures, and what the callers heard. */
function sideOf(runs: readonly TalkRun[], rounds: RoundFigures[], heard: HeardLog, pronouncer: Pronouncer | undefined): LanguagesSide {
  const replies = runs.flatMap((run) => run.replies);
  const switched = heard.switched();
  return {
    calls: runs[0]?.calls ?? 0,
    turns: runs.reduce((sum, run) => sum + run.turns, 0),
    timedOut: runs.reduce((sum, run) => sum + run.timedOut, 0),
    durationS: runs.reduce((sum, run) => sum + run.durationS, 0),
    eventLoop: pooledLoop(runs),
    ...analyzeReplies(replies),
    speech: checkSpeech(replies, heard, pronouncer),
    stayed: turnFigures(replies.filter((r) => !switched.has(r.tag))),
    switched: turnFigures(replies.filter((r) => switched.has(r.tag))),
    rounds,
  };
}

/** The order of a level's rounds: off, on, on, off, off, on, … — each side as often first as second. */
export function roundOrder(rounds: number): ('off' | 'on')[] {
  const order: ('off' | 'on')[] = [];
  for (let r = 0; r < rounds; r++) order.push(...(r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)));
  return order;
}

/** The figures of the bench's pronunciations file. */
export function pronunciationsFigures(): LanguagesBenchResult['pronunciations'] {
  const pronouncer = benchPronouncer();
  const keys = BENCH_PRONUNCIATIONS.split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.slice(0, line.search(/: /)));
  const replies = [0, 1, 2, 3].map((id) => replyText(`Zq${id}`)).join(' ');
  const inReplies = keys.filter((key) => {
    const single = parsePronunciations(`${key}: x\n`, 'key').pronouncer;
    return single.text(replies) !== replies;
  });
  return { entries: pronouncer.size, regexes: keys.filter((key) => key.startsWith('/')).length, inReplies };
}

/** One call of one turn asking in German, fast; the language its answer came in. */
async function askInGerman(fixture: BenchFixture, ask: number): Promise<string | undefined> {
  let answeredIn: string | undefined;
  fixture.onSpeak = (_reply, speak) => (answeredIn ??= voiceLanguage(speak.tts));
  fixture.fast = true;
  try {
    const talk = { calls: 1, turns: 1, openPerSecond: 1000, thinkMs: 5, msPerChar: 0.05, seed: 1, turnTimeoutMs: 10_000 };
    await runTalkingCalls(fixture, { ...talk, idPrefix: `languages-ready-${ask}`, words: (tag) => `Frage ${tag}: ${GERMAN[0]}` });
  } finally {
    fixture.fast = false;
    fixture.onSpeak = undefined;
    fixture.reset();
  }
  return answeredIn;
}

/**
 * Asks the 'on' Hotline in German until it answers in German: its detector loads its data on the
 * first detection and switches no caller before that is done. The 'off' one is asked as often, so
 * both go on with the same reply ids, and so the same words turn for turn. Returns how many asks it took.
 */
async function awaitDetection(on: BenchFixture, off: BenchFixture): Promise<number> {
  for (let asks = 1; asks <= 40; asks++) {
    if ((await askInGerman(on, asks)) === 'de') {
      for (let ask = 1; ask <= asks; ask++) await askInGerman(off, ask);
      return asks;
    }
    await sleep(250);
  }
  throw new Error('the Hotline with languages on never answered German words in German: is its language detection loading?');
}

/** First-speak overhead with languages and pronunciations off and on, two Hotlines side by side. */
export async function measureFirstSpeakWithLanguages(options: LanguagesFirstSpeakOptions, prompts: LanguagePrompts): Promise<LanguagesFirstSpeak> {
  const pronouncer = benchPronouncer();
  const startSeconds = { off: 0, on: 0 };
  const start = async (which: 'off' | 'on'): Promise<BenchFixture> => {
    const on = which === 'on';
    options.progress(`languages: starting Hotline with languages and pronunciations ${which}`);
    const started = now();
    const fixture = await BenchFixture.start({
      ...options.fixture,
      env: {
        PROMPTS_DIR: on ? prompts.on : prompts.off,
        LANGUAGES: String(on),
        CONFIGURE_TRANSCRIPTION: String(on),
        KNOWLEDGE: 'false',
      },
    });
    startSeconds[which] = (now() - started) / 1000;
    return fixture;
  };
  const fixtures: BenchFixture[] = [];
  try {
    const off = await start('off');
    fixtures.push(off);
    const on = await start('on');
    fixtures.push(on);
    for (const [name, fixture] of [['off', off], ['on', on]] as const) {
      options.progress(`languages: Hotline with languages and pronunciations ${name}, warming up`);
      await warmUp(fixture, { ...options.warmUp, seed: options.talk.seed, words: languageWords });
    }
    const detectionAsks = await awaitDetection(on, off);
    options.progress(`languages: the Hotline with languages on answered German in German after ${detectionAsks} ask${detectionAsks === 1 ? '' : 's'}`);
    const levels: LanguagesLevel[] = [];
    const fixtureOf = { off, on };
    for (const calls of options.levels) {
      const turns = options.turnsFor(calls);
      const kept = { off: { runs: [] as TalkRun[], rounds: [] as RoundFigures[], heard: new HeardLog() }, on: { runs: [] as TalkRun[], rounds: [] as RoundFigures[], heard: new HeardLog() } };
      const order = roundOrder(options.rounds);
      for (const [index, which] of order.entries()) {
        const round = Math.floor(index / 2) + 1;
        const fixture = fixtureOf[which];
        const side = kept[which];
        options.progress(`languages: first-speak, ${which}, round ${round} of ${options.rounds}: ${calls} calls × ${turns} turns`);
        const loadAverage = loadavg()[0] ?? Number.NaN;
        fixture.onSpeak = (reply, speak) => side.heard.add(reply, speak);
        try {
          const run = await runTalkingCalls(fixture, { ...options.talk, calls, turns, words: languageWords, idPrefix: `languages-${which}-${calls}-${round}` });
          const analysis = analyzeReplies(run.replies);
          side.runs.push(run);
          side.rounds.push({
            overheadP50Ms: analysis.overheadMs.p50,
            overheadP99Ms: analysis.overheadMs.p99,
            requestP50Ms: analysis.timeToFirstSpeak.llmRequestMs.p50,
            durationS: run.durationS,
            loadAverage,
          });
        } finally {
          fixture.onSpeak = undefined;
          fixture.reset();
        }
      }
      levels.push({
        calls,
        turnsPerRound: turns,
        off: sideOf(kept.off.runs, kept.off.rounds, kept.off.heard, undefined),
        on: sideOf(kept.on.runs, kept.on.rounds, kept.on.heard, pronouncer),
      });
    }
    return { note: LANGUAGES_NOTE, startSeconds, detectionAsks, levels, callersNice: on.callersNice };
  } finally {
    for (const fixture of fixtures) await fixture.close();
  }
}
