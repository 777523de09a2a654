/**
 * What the demo model says, and the caller's words it listens for, in each language Hotline ships
 * prompts for (prompts/, prompts/de/, prompts/tr/, prompts/ar/). A call answered in German is given
 * the German system prompt, so the demo model answers in the language of the system prompt it is
 * sent, and understands the caller in that language: a real model would do the same.
 *
 * The English table is the demo model as it always was, word for word, German words it has always
 * understood included: the README and many tests show its lines.
 */
import { DEFAULT_MIN_CONFIDENCE, detectLanguage } from '../language/detect.js';
import type { ChatRequestBody } from '../llm/scripted-server.js';
import { looksLikeQuestion, UNKNOWN_ANSWER } from './demo-knowledge.js';

export const DEMO_LANGUAGES = ['en', 'de', 'tr', 'ar'] as const;
export type DemoLanguage = (typeof DEMO_LANGUAGES)[number];

/** An order as the shop tells it, each field undefined when the shop did not say. */
export interface OrderFacts {
  readonly number: string;
  readonly carrier: string | undefined;
  /** expected_delivery, or delivered: the shop's words ("tomorrow"), which a table may translate. */
  readonly when: string | undefined;
}

export interface DemoPhrases {
  readonly language: DemoLanguage;
  /** Asking for a person: the transfer, after `transfer`. */
  readonly person: RegExp;
  readonly transfer: string;
  readonly bye: RegExp;
  readonly goodbye: string;
  /** The caller stops the agent ("wait", "sorry"). */
  readonly wait: RegExp;
  readonly listening: string;
  readonly hours: RegExp;
  readonly hoursAnswer: string;
  readonly prices: RegExp;
  readonly pricesAnswer: string;
  readonly address: RegExp;
  /** Said through the speak tool. */
  readonly addressAnswer: string;
  readonly about: RegExp;
  readonly aboutAnswer: string;
  /** Whether the caller asks something: a question nothing in the documents answers gets `unknown`. */
  asks(said: string): boolean;
  readonly unknown: string;
  /** The answer no rule gave: the caller's words (cut short already) said back. */
  echo(words: string): string;
  /** The order tool (order_status). */
  readonly orderWords: RegExp;
  /** The question for the number: a bare number after it is the answer. */
  readonly askForNumber: string;
  readonly askOrderNumber: string;
  /** An order number the caller gave that the tool's arguments lack. */
  readonly numberYouGave: string;
  noOrderSystem(number: string): string;
  shipped(order: OrderFacts): string;
  packing(order: OrderFacts): string;
  delivered(order: OrderFacts): string;
  orderStatus(number: string, status: string): string;
  orderFound(number: string): string;
  orderNotFound(number: string): string;
  readonly orderSystemDown: string;
  /** The callback tool (book_callback). */
  readonly callbackWords: RegExp;
  readonly noCallbacks: string;
  callbackBooked(when: string | undefined, id: string | undefined): string;
  readonly numberWithheld: string;
  readonly callbackFailed: string;
  /** Another tool answered. */
  toolAnswered(name: string): string;
}

export const ENGLISH: DemoPhrases = {
  language: 'en',
  person: /\b(human|person|agent|someone|somebody|representative|operator|colleague|mensch|mitarbeiter)\b/,
  transfer: "Of course. One moment, I'll connect you with a colleague.",
  bye: /\b(bye|goodbye|that's all|that is all|nothing else|no thanks|tschüss|auf wiederhören)\b/,
  goodbye: 'Thanks for calling, and have a lovely day. Goodbye!',
  wait: /^(wait|stop|sorry|hold on|one moment)\b/,
  listening: "Sure, I'm listening.",
  hours: /\b(hours|open|close|closing|opening)\b/,
  hoursAnswer:
    "We're open Monday to Friday from 9 a.m. to 6 p.m. On Saturdays, we're open from 10 a.m. to 2 p.m. Is there anything else I can help you with?",
  prices: /\b(price|prices|cost|costs|how much|fee)\b/,
  pricesAnswer: 'A standard appointment is $49.50, and the first consultation is free. Would you like me to book one for you?',
  address: /\b(where|address|located|location|find you)\b/,
  addressAnswer: "We're at 12 Market Street, right next to the station. There's free parking behind the building.",
  about: /\b(tell me|story|more|explain|about you|what can you do)\b/,
  aboutAnswer:
    "I'm Hotline's demo model, and I'm here to show how a phone agent should feel. Every sentence you hear is sent to the voice service " +
    'the moment it is complete, so you never wait for the whole answer. If you interrupt me, I stop at once and forget what you ' +
    "didn't hear. When you ask for a person, I transfer you after my last sentence has played. And when you say goodbye, " +
    'I let my goodbye finish before I hang up. Try interrupting me now!',
  asks: looksLikeQuestion,
  unknown: UNKNOWN_ANSWER,
  echo: (words) =>
    `I'm the built-in demo model, so my answers are scripted. You said: "${words}". ` +
    'Ask about opening hours, prices, our address or order 4711, ask for a person, or say goodbye.',
  orderWords: /\b(order|orders|parcel|package|delivery|shipment|bestellung|paket|lieferung)\b/,
  askForNumber: "What's your order number?",
  askOrderNumber: "Sure, I can check that for you. What's your order number? You can also type it on the keypad, then the hash key.",
  numberYouGave: 'you gave',
  noOrderSystem: (number) => `I'm sorry, I can't look up order ${number} right now: no order system is connected.`,
  shipped: ({ number, carrier, when }) => `Your order ${number} has shipped${carrier ? ` with ${carrier}` : ''} and should arrive ${when ?? 'soon'}.`,
  packing: ({ number, when }) => `Your order ${number} is being packed right now and should arrive ${when ?? 'soon'}.`,
  delivered: ({ number, when }) => `Your order ${number} was delivered ${when ?? 'already'}.`,
  orderStatus: (number, status) => `The status of your order ${number} is: ${status}.`,
  orderFound: (number) => `I found your order ${number}.`,
  orderNotFound: (number) => `I'm sorry, I couldn't find an order with the number ${number}. Could you check the number and tell me again?`,
  orderSystemDown: "I'm sorry, I can't reach our order system right now. Would you like me to connect you with a colleague?",
  callbackWords: /\b(call me back|call back|callback|ring me back|rückruf|zurückrufen)\b/,
  noCallbacks: "I'm sorry, I can't book callbacks right now. Would you like me to connect you with a colleague instead?",
  callbackBooked: (when, id) => `Done: a colleague will call you back ${when ?? 'soon'}.${id ? ` Your reference is ${id}.` : ''}`,
  numberWithheld: "I'm sorry, I can't book a callback: your number is withheld.",
  callbackFailed: "I'm sorry, I couldn't book the callback. Would you like me to connect you with a colleague instead?",
  toolAnswered: (name) => `The ${name || 'tool'} answered.`,
};

/** Whole words, in any script: the caller's words are lower case already. */
function words(...alternatives: string[]): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join('|')})(?![\\p{L}\\p{N}])`, 'u');
}

/** Words that begin so: Turkish adds its endings to a stem ("saatleriniz", "siparişim"). */
function stems(...alternatives: string[]): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join('|')})`, 'u');
}

/** Arabic words, with the conjunction, preposition and article written onto them ("والأسعار", "بالطلب") and any ending. */
function arabic(...alternatives: string[]): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}])[وف]?[بلك]?(?:ال)?(?:${alternatives.join('|')})`, 'u');
}

/** The shop's words for a time (the demo shop speaks English), in another language; others stay as they are. */
function when(table: Readonly<Record<string, string>>, said: string | undefined, otherwise: string): string {
  if (said === undefined) return otherwise;
  return table[said.toLowerCase()] ?? said;
}

const GERMAN_TIMES: Readonly<Record<string, string>> = {
  tomorrow: 'morgen',
  today: 'heute',
  yesterday: 'gestern',
  'in two to three days': 'in zwei bis drei Tagen',
  'within the next hour': 'innerhalb der nächsten Stunde',
};

const GERMAN_COLLEAGUE = 'mit einer Kollegin oder einem Kollegen';

const GERMAN: DemoPhrases = {
  language: 'de',
  person: words(
    'mensch(?:en)?',
    'mitarbeiter(?:in|innen)?',
    'kolleg(?:e|en|in)',
    'person',
    'jemand(?:em|en)?',
    'berater(?:in)?',
    'sachbearbeiter(?:in)?',
    'durchstellen',
    'verbinden',
  ),
  transfer: `Natürlich. Einen Moment, ich verbinde Sie ${GERMAN_COLLEAGUE}.`,
  bye: words('tschüss', 'tschüs', 'auf wiederhören', 'auf wiedersehen', "das war's", 'das wars', 'das war alles', 'nichts weiter', 'nein danke', 'ciao'),
  goodbye: 'Danke für Ihren Anruf, und einen schönen Tag noch. Auf Wiederhören!',
  wait: /^(?:moment|einen moment|warten sie|stopp|stop|halt|entschuldigung|sekunde)(?![\p{L}])/u,
  listening: 'Natürlich, ich höre zu.',
  hours: words('öffnungszeit(?:en)?', 'geöffnet', 'offen', 'geschlossen', 'schließen', 'öffnen', 'aufhaben', 'auf haben', 'machen sie auf'),
  hoursAnswer:
    'Wir haben Montag bis Freitag von 9 bis 18 Uhr geöffnet. Samstags sind wir von 10 bis 14 Uhr für Sie da. Kann ich Ihnen sonst noch helfen?',
  prices: words('preis(?:e|en)?', 'kosten', 'kostet', 'wie viel', 'wieviel', 'gebühr(?:en)?'),
  pricesAnswer: 'Ein normaler Termin kostet 49,50 Dollar, und die erste Beratung ist kostenlos. Soll ich einen Termin für Sie buchen?',
  address: words('adresse', 'anschrift', 'wo', 'standort', 'anfahrt', 'finde ich sie', 'befinden sie sich'),
  addressAnswer: 'Wir sind in der Marktstraße 12, direkt neben dem Bahnhof. Hinter dem Gebäude gibt es kostenlose Parkplätze.',
  about: words('erzählen sie', 'erzähl', 'mehr über', 'was können sie', 'wer sind sie', 'über sich'),
  aboutAnswer:
    'Ich bin das Demo-Modell von Hotline und zeige, wie sich ein Telefonassistent anfühlen sollte. Jeder Satz, den Sie hören, geht an den ' +
    'Sprachdienst, sobald er fertig ist, so warten Sie nie auf die ganze Antwort. Wenn Sie mich unterbrechen, höre ich sofort auf und ' +
    'vergesse, was Sie nicht gehört haben. Wenn Sie einen Menschen sprechen möchten, verbinde ich Sie, nachdem mein letzter Satz gespielt ' +
    'ist. Und wenn Sie sich verabschieden, lasse ich meinen Abschied zu Ende sprechen, bevor ich auflege. Unterbrechen Sie mich doch jetzt einmal!',
  // demo-knowledge.ts knows German questions already.
  asks: looksLikeQuestion,
  unknown: `Das weiß ich leider nicht, und ich möchte nicht raten. Soll ich Sie ${GERMAN_COLLEAGUE} verbinden?`,
  echo: (said) =>
    `Ich bin das eingebaute Demo-Modell, meine Antworten stehen also im Skript. Sie sagten: „${said}". ` +
    'Fragen Sie nach den Öffnungszeiten, den Preisen, unserer Adresse oder der Bestellung 4711, verlangen Sie einen Menschen, oder verabschieden Sie sich.',
  orderWords: words('bestellung(?:en)?', 'bestellnummer', 'paket', 'lieferung', 'sendung'),
  askForNumber: 'Wie lautet Ihre Bestellnummer?',
  askOrderNumber: 'Gern, das sehe ich für Sie nach. Wie lautet Ihre Bestellnummer? Sie können sie auch über die Tastatur eingeben, dann die Rautetaste.',
  numberYouGave: 'mit der genannten Nummer',
  noOrderSystem: (number) => `Es tut mir leid, ich kann die Bestellung ${number} gerade nicht nachsehen: Es ist kein Bestellsystem angebunden.`,
  shipped: ({ number, carrier, when: arrives }) =>
    `Ihre Bestellung ${number} wurde${carrier ? ` mit ${carrier}` : ''} verschickt und sollte ${when(GERMAN_TIMES, arrives, 'bald')} ankommen.`,
  packing: ({ number, when: arrives }) => `Ihre Bestellung ${number} wird gerade verpackt und sollte ${when(GERMAN_TIMES, arrives, 'bald')} ankommen.`,
  delivered: ({ number, when: delivered }) => `Ihre Bestellung ${number} wurde ${when(GERMAN_TIMES, delivered, 'bereits')} zugestellt.`,
  orderStatus: (number, status) => `Der Status Ihrer Bestellung ${number} ist: ${status}.`,
  orderFound: (number) => `Ich habe Ihre Bestellung ${number} gefunden.`,
  orderNotFound: (number) =>
    `Es tut mir leid, ich habe keine Bestellung mit der Nummer ${number} gefunden. Könnten Sie die Nummer prüfen und sie mir noch einmal sagen?`,
  orderSystemDown: `Es tut mir leid, ich erreiche unser Bestellsystem gerade nicht. Soll ich Sie ${GERMAN_COLLEAGUE} verbinden?`,
  callbackWords: words('rückruf', 'zurückrufen', 'zurückruft', 'rufen sie mich zurück', 'ruft mich zurück'),
  noCallbacks: `Es tut mir leid, ich kann gerade keine Rückrufe buchen. Soll ich Sie stattdessen ${GERMAN_COLLEAGUE} verbinden?`,
  callbackBooked: (time, id) =>
    `Erledigt: Eine Kollegin oder ein Kollege ruft Sie ${when(GERMAN_TIMES, time, 'bald')} zurück.${id ? ` Ihre Referenz ist ${id}.` : ''}`,
  numberWithheld: 'Es tut mir leid, ich kann keinen Rückruf buchen: Ihre Nummer ist unterdrückt.',
  callbackFailed: `Es tut mir leid, ich konnte den Rückruf nicht buchen. Soll ich Sie stattdessen ${GERMAN_COLLEAGUE} verbinden?`,
  toolAnswered: (name) => (name ? `Das Werkzeug ${name} hat geantwortet.` : 'Das Werkzeug hat geantwortet.'),
};

const TURKISH_TIMES: Readonly<Record<string, string>> = {
  tomorrow: 'yarın',
  today: 'bugün',
  yesterday: 'dün',
  'in two to three days': 'iki üç gün içinde',
  'within the next hour': 'bir saat içinde',
};

/** Turkish questions: the particle mı/mi/mu/mü (with its endings: "misiniz"), or a question word. */
const TURKISH_QUESTION = words(
  'm[ıiuü](?:s[ıiuü]n(?:[ıiuü]z)?|y[ıiuü]m|y[ıiuü]z|d[ıiuü]r)?',
  'ne',
  'neden',
  'niçin',
  'niye',
  'nasıl',
  'nerede',
  'nereden',
  'nereye',
  'kaç',
  'kaçta',
  'hangi',
  'kim',
);

const TURKISH: DemoPhrases = {
  language: 'tr',
  // "İnsan" lower-cased by toLowerCase() keeps its dot as a combining character.
  person: stems('i\u0307?nsan', 'temsilci', 'yetkili', 'operatör', 'görevli', 'biriyle', 'birisiyle', 'çalışan', 'personel', 'bağlar m', 'bağlay'),
  transfer: 'Tabii ki. Bir saniye, sizi bir çalışma arkadaşıma bağlıyorum.',
  // Not "iyi günler": it says hello as often as goodbye. Not "bu kadar" alone: "bu kadar pahalı mı?".
  bye: stems('hoşça kal', 'güle güle', 'görüşürüz', 'görüşmek üzere', 'hepsi bu kadar', 'şimdilik bu kadar', 'başka bir şey yok', 'hayır,? teşekkür'),
  goodbye: 'Aradığınız için teşekkürler, iyi günler dilerim. Hoşça kalın!',
  wait: /^(?:bekleyin|bir saniye|bir dakika|durun|dur|pardon|özür dilerim)(?![\p{L}])/u,
  listening: 'Tabii, sizi dinliyorum.',
  hours: stems('saat', 'açık', 'açıl', 'kapalı', 'kapan', 'mesai'),
  hoursAnswer:
    'Pazartesiden cumaya saat 9 ile 18 arasında açığız. Cumartesi günleri saat 10 ile 14 arasında açığız. Size başka bir konuda yardımcı olabilir miyim?',
  prices: stems('fiyat', 'ücret', 'kaç para', 'ne kadar', 'tutar', 'maliyet'),
  pricesAnswer: 'Standart bir randevu 49,50 dolar, ilk danışma ise ücretsiz. Sizin için bir randevu ayarlamamı ister misiniz?',
  address: stems('adres', 'nerede', 'konum', 'yol tarifi', 'nasıl gelebilirim'),
  addressAnswer: 'Market Caddesi 12 numaradayız, istasyonun hemen yanında. Binanın arkasında ücretsiz otopark var.',
  about: stems('kendinizden', 'anlatır mısınız', 'daha fazla', 'ne yapabilirsiniz', 'kimsiniz'),
  aboutAnswer:
    "Ben Hotline'ın demo modeliyim ve bir telefon asistanının nasıl olması gerektiğini göstermek için buradayım. Duyduğunuz her cümle, " +
    'tamamlandığı anda ses hizmetine gönderilir, böylece yanıtın tamamını hiç beklemezsiniz. Sözümü keserseniz hemen dururum ve ' +
    'duymadığınız kısmı unuturum. Bir kişiyle görüşmek istediğinizde, son cümlem çalındıktan sonra sizi aktarırım. Vedalaştığınızda da ' +
    'kapatmadan önce vedamı bitiririm. Şimdi sözümü kesmeyi deneyin!',
  asks: (said) => looksLikeQuestion(said) || TURKISH_QUESTION.test(said),
  unknown: 'Özür dilerim, bunu bilmiyorum ve tahmin yürütmek istemem. Sizi bir çalışma arkadaşıma bağlamamı ister misiniz?',
  echo: (said) =>
    `Ben yerleşik demo modeliyim, bu yüzden yanıtlarım önceden yazılmış. Şunu söylediniz: "${said}". ` +
    'Çalışma saatlerimizi, fiyatlarımızı, adresimizi ya da 4711 numaralı siparişi sorabilir, bir kişiyle görüşmek isteyebilir ya da vedalaşabilirsiniz.',
  orderWords: stems('sipariş', 'kargo', 'paket', 'teslimat', 'gönderi'),
  askForNumber: 'Sipariş numaranız nedir?',
  askOrderNumber: 'Tabii, sizin için kontrol edebilirim. Sipariş numaranız nedir? Numarayı tuş takımından girip ardından kare tuşuna da basabilirsiniz.',
  numberYouGave: 'verdiğiniz',
  noOrderSystem: (number) => `Özür dilerim, ${number} numaralı siparişe şu anda bakamıyorum: bağlı bir sipariş sistemi yok.`,
  shipped: ({ number, carrier, when: arrives }) =>
    `${number} numaralı siparişiniz${carrier ? ` ${carrier} ile` : ''} kargoya verildi ve ${when(TURKISH_TIMES, arrives, 'yakında')} elinizde olmalı.`,
  packing: ({ number, when: arrives }) => `${number} numaralı siparişiniz şu anda paketleniyor ve ${when(TURKISH_TIMES, arrives, 'yakında')} elinizde olmalı.`,
  delivered: ({ number, when: delivered }) => `${number} numaralı siparişiniz ${when(TURKISH_TIMES, delivered, 'zaten')} teslim edildi.`,
  orderStatus: (number, status) => `${number} numaralı siparişinizin durumu: ${status}.`,
  orderFound: (number) => `${number} numaralı siparişinizi buldum.`,
  orderNotFound: (number) => `Özür dilerim, ${number} numaralı bir sipariş bulamadım. Numarayı kontrol edip bana tekrar söyleyebilir misiniz?`,
  orderSystemDown: 'Özür dilerim, şu anda sipariş sistemimize ulaşamıyorum. Sizi bir çalışma arkadaşıma bağlamamı ister misiniz?',
  callbackWords: stems('geri ara', 'geri dönüş', 'beni ara'),
  noCallbacks: 'Özür dilerim, şu anda geri arama ayarlayamıyorum. Bunun yerine sizi bir çalışma arkadaşıma bağlamamı ister misiniz?',
  callbackBooked: (time, id) =>
    `Tamamdır: bir çalışma arkadaşım sizi ${when(TURKISH_TIMES, time, 'en kısa sürede')} geri arayacak.${id ? ` Referans numaranız ${id}.` : ''}`,
  numberWithheld: 'Özür dilerim, geri arama ayarlayamıyorum: numaranız gizli.',
  callbackFailed: 'Özür dilerim, geri aramayı ayarlayamadım. Bunun yerine sizi bir çalışma arkadaşıma bağlamamı ister misiniz?',
  toolAnswered: (name) => (name ? `${name} aracı yanıt verdi.` : 'Araç yanıt verdi.'),
};

const ARABIC_TIMES: Readonly<Record<string, string>> = {
  tomorrow: 'غدًا',
  today: 'اليوم',
  yesterday: 'أمس',
  'in two to three days': 'خلال يومين إلى ثلاثة أيام',
  'within the next hour': 'خلال الساعة القادمة',
};

/** Arabic questions: a question mark of either script, or a question word opening a clause. */
const ARABIC_QUESTION = /[?؟]|(?:^|[.,،؛:!]\s*)[وف]?(?:هل|ما|ماذا|متى|أين|كيف|كم|لماذا|من|أي|ممكن)(?![\p{L}])/u;

const ARABIC_COLLEAGUE = 'أحد زملائي';

const ARABIC: DemoPhrases = {
  language: 'ar',
  // Not "أحد" (someone): it is Sunday too. Not "شخصيًا" (in person).
  person: arabic('موظف', 'شخص(?!ي)', 'إنسان', 'انسان', 'بشري', 'ممثل', 'حوّلني', 'حولني', 'تحويلي', 'وصلني', 'التحدث مع', 'التحدث إلى', 'أتحدث مع', 'أكلم'),
  transfer: `بالتأكيد. لحظة من فضلك، سأحوّلك إلى ${ARABIC_COLLEAGUE}.`,
  bye: arabic('مع السلامة', 'وداعًا', 'وداعا', 'إلى اللقاء', 'هذا كل شيء', 'لا شيء آخر', 'لا شكرًا', 'لا شكرا', 'لا، شكرًا', 'لا، شكرا', 'في أمان الله'),
  goodbye: 'شكرًا لاتصالك، وأتمنى لك يومًا سعيدًا. مع السلامة!',
  wait: /^(?:انتظر|لحظة|مهلًا|مهلا|توقف|عفوًا|عفوا|آسف)(?![\p{L}])/u,
  listening: 'بالتأكيد، أنا أستمع إليك.',
  hours: arabic('مواعيد', 'ساعات العمل', 'ساعات الدوام', 'أوقات العمل', 'دوام', 'تفتح', 'مفتوح', 'تغلق', 'مغلق'),
  hoursAnswer:
    'نعمل من الاثنين إلى الجمعة من الساعة 9 صباحًا حتى الساعة 6 مساءً. ويوم السبت نعمل من الساعة 10 صباحًا حتى الساعة 2 ظهرًا. هل يمكنني مساعدتك في شيء آخر؟',
  prices: arabic('سعر', 'أسعار', 'اسعار', 'تكلفة', 'كم يكلف', 'كم تكلف', 'رسوم', 'ثمن'),
  pricesAnswer: 'سعر الموعد العادي 49.50 دولارًا، والاستشارة الأولى مجانية. هل تريد أن أحجز لك موعدًا؟',
  address: arabic('عنوان', 'أين', 'موقع', 'مكانكم', 'كيف أصل'),
  addressAnswer: 'نحن في 12 شارع السوق، بجوار المحطة مباشرة. وتوجد مواقف سيارات مجانية خلف المبنى.',
  about: arabic('أخبرني', 'حدثني', 'حدّثني', 'المزيد', 'ماذا تستطيع', 'من أنت', 'عن نفسك'),
  aboutAnswer:
    'أنا نموذج العرض الخاص بخدمة Hotline، وأنا هنا لأريك كيف ينبغي أن يكون المساعد الهاتفي. كل جملة تسمعها تُرسل إلى خدمة الصوت فور اكتمالها، ' +
    'فلا تنتظر الإجابة كاملة أبدًا. إذا قاطعتني أتوقف فورًا وأنسى ما لم تسمعه. وعندما تطلب التحدث إلى شخص، أحوّلك بعد أن تُشغَّل جملتي الأخيرة. ' +
    'وعندما تودّعني، أُكمل عبارة الوداع قبل أن أنهي المكالمة. جرّب أن تقاطعني الآن!',
  asks: (said) => looksLikeQuestion(said) || ARABIC_QUESTION.test(said),
  unknown: `عذرًا، لا أعرف ذلك، ولا أريد أن أخمّن. هل تريد أن أحوّلك إلى ${ARABIC_COLLEAGUE}؟`,
  echo: (said) =>
    `أنا نموذج العرض المدمج، لذلك إجاباتي مكتوبة مسبقًا. لقد قلت: «${said.replace(/[\s؟،؛]+$/u, '')}». ` +
    'اسأل عن مواعيد العمل أو الأسعار أو عنواننا أو الطلب 4711، أو اطلب التحدث إلى شخص، أو ودّعنا.',
  orderWords: arabic('طلب', 'شحنة', 'طرد', 'توصيل'),
  askForNumber: 'ما رقم طلبك؟',
  askOrderNumber: 'بالتأكيد، يمكنني التحقق من ذلك. ما رقم طلبك؟ يمكنك أيضًا إدخاله من لوحة المفاتيح ثم الضغط على مفتاح المربع.',
  numberYouGave: 'الذي ذكرته',
  noOrderSystem: (number) => `عذرًا، لا أستطيع الاستعلام عن الطلب ${number} الآن: لا يوجد نظام طلبات متصل.`,
  shipped: ({ number, carrier, when: arrives }) =>
    `تم شحن طلبك ${number}${carrier ? ` مع ${carrier}` : ''}، ومن المتوقع أن يصل ${when(ARABIC_TIMES, arrives, 'قريبًا')}.`,
  packing: ({ number, when: arrives }) => `طلبك ${number} قيد التغليف الآن، ومن المتوقع أن يصل ${when(ARABIC_TIMES, arrives, 'قريبًا')}.`,
  delivered: ({ number, when: delivered }) => `تم تسليم طلبك ${number} ${when(ARABIC_TIMES, delivered, 'بالفعل')}.`,
  orderStatus: (number, status) => `حالة طلبك ${number} هي: ${status}.`,
  orderFound: (number) => `وجدت طلبك ${number}.`,
  orderNotFound: (number) => `عذرًا، لم أجد طلبًا بالرقم ${number}. هل يمكنك التحقق من الرقم وإخباري به مرة أخرى؟`,
  orderSystemDown: `عذرًا، لا أستطيع الوصول إلى نظام الطلبات الآن. هل تريد أن أحوّلك إلى ${ARABIC_COLLEAGUE}؟`,
  callbackWords: arabic('اتصال بي', 'اتصل بي', 'اتصلوا بي', 'تتصل بي', 'تتصلوا بي', 'يتصل بي', 'معاودة الاتصال', 'عاود الاتصال', 'عاودوا الاتصال'),
  noCallbacks: `عذرًا، لا أستطيع حجز معاودة اتصال الآن. هل تريد أن أحوّلك إلى ${ARABIC_COLLEAGUE} بدلًا من ذلك؟`,
  callbackBooked: (time, id) => `تم: سيتصل بك ${ARABIC_COLLEAGUE} ${when(ARABIC_TIMES, time, 'قريبًا')}.${id ? ` رقمك المرجعي هو ${id}.` : ''}`,
  numberWithheld: 'عذرًا، لا أستطيع حجز معاودة اتصال: رقمك محجوب.',
  callbackFailed: `عذرًا، لم أتمكن من حجز معاودة الاتصال. هل تريد أن أحوّلك إلى ${ARABIC_COLLEAGUE} بدلًا من ذلك؟`,
  toolAnswered: (name) => (name ? `أجابت الأداة ${name}.` : 'أجابت الأداة.'),
};

const TABLES: Readonly<Record<DemoLanguage, DemoPhrases>> = { en: ENGLISH, de: GERMAN, tr: TURKISH, ar: ARABIC };

export function phrasesFor(language: DemoLanguage): DemoPhrases {
  return TABLES[language];
}

// The system prompt is the same on every turn of a call: one detection per prompt, not per request.
let lastSystem: string | undefined;
let lastLanguage: DemoLanguage = 'en';

/**
 * The language of the system prompt the request gives (the call's prompts folder's language),
 * among those the demo speaks; English when the prompt is in none of them, or detection cannot
 * tell yet (its data loads in the background on first use).
 */
export function demoLanguage(request: ChatRequestBody): DemoLanguage {
  const system = systemText(request);
  if (system === lastSystem) return lastLanguage;
  const found = system.trim() === '' ? undefined : detectLanguage(system, DEMO_LANGUAGES);
  const language = found && found.confidence >= DEFAULT_MIN_CONFIDENCE && isDemoLanguage(found.language) ? found.language : 'en';
  // Not kept while detection cannot tell: the next request may find its data loaded.
  if (found !== undefined) [lastSystem, lastLanguage] = [system, language];
  return language;
}

/** The phrases of the language the request's system prompt is in. */
export function demoPhrases(request: ChatRequestBody): DemoPhrases {
  return TABLES[demoLanguage(request)];
}

function isDemoLanguage(language: string): language is DemoLanguage {
  return (DEMO_LANGUAGES as readonly string[]).includes(language);
}

function systemText(request: ChatRequestBody): string {
  return request.messages
    .filter((message) => message.role === 'system' || message.role === 'developer')
    .map((message) => (typeof message.content === 'string' ? message.content : message.content.map((part) => part.text).join('')))
    .join('\n');
}
