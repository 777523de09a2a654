/**
 * A synthetic knowledge folder for the knowledge phase (knowledge.ts): the documents of a made-up
 * chain of coffee machine shops, in English and, under de/, German. Markdown files of sections (a
 * product's pages, a shop's, help pages), each section short enough to be one passage, so a folder
 * holds exactly the passages asked for. What makes a search costly is kept realistic: a common
 * word ("coffee", "machine", "Lieferung") is in many passages and a rare one in few, as the words
 * follow a Zipf distribution over a vocabulary of a few thousand words (the shop's words first,
 * made-up ones in the long tail), and product, brand, street and place names, prices, times and
 * error codes give the many distinct terms real documents have. Seeded: the same arguments write
 * the same files. Also the questions callers ask of it, some of which it answers and some not.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { seededRandom } from './stats.js';

type Random = () => number;
type Lang = 'en' | 'de';

/** A section's words stay under this: with its heading it is one passage (blocks.ts cuts at 1,000). */
const SECTION_MAX_CHARS = 950;
/** Of the files, this share is German (under de/). */
const GERMAN_SHARE = 0.2;
/** Distinct content words per language, the shop's own first, made-up ones after. */
const VOCABULARY = { en: 4_000, de: 3_000 } as const;
/** The Zipf exponent of word frequencies: about 1 in natural text. */
const ZIPF_S = 1.0;

// The shop's words, commonest first (roughly): the head of the distribution.
const EN_HEAD = `coffee machine order price delivery espresso milk water grinder customer day service warranty return
cup bean repair time shop week month year store model part filter pump boiler pressure temperature setting button display
cleaning descaling frother capsule tank tray drip brew shot cappuccino latte grind size dose tamper portafilter basket group
head steam wand hot cold fresh roast dark light medium blend origin arabica robusta flavour aroma crema taste strength
package parcel shipping address invoice payment card account refund receipt discount voucher gift subscription offer sale
stock availability colour steel black white silver chrome plastic glass cable plug power socket voltage watt litre gram
minute hour morning afternoon evening weekend holiday appointment visit counter technician engineer team staff manager
phone email message form website app update firmware software error code light warning alarm signal sensor valve seal
gasket hose nozzle spout lid cover handle knob dial lever switch screen menu option program profile user guide manual
instruction step tip advice question answer problem solution issue fault defect damage crack leak noise smell smoke heat
spare replacement accessory kit tablet descaler cleaner brush cloth sponge towel jug pitcher thermometer scale timer
household office restaurant cafe bar hotel kitchen counter table shelf cupboard space size width height depth weight
capacity volume amount quantity portion recipe drink beverage tea chocolate syrup sugar cream foam texture microfoam
extraction yield ratio channel puck crema clump burr motor gear blade speed rpm noise level energy standby mode eco auto
manual programmable dual single double triple boiler thermoblock heat exchanger rotary vibration pump pressure gauge bar
purchase buyer seller dealer partner brand range series edition version generation upgrade trade exchange loan rental
lease finance instalment credit debit paypal transfer cash bank fee charge cost total amount tax vat net gross
courier van truck driver route slot window tracking number status confirmation notification reminder collection pickup
locker branch location district street road avenue square station parking garage entrance floor lift stairs access
wheelchair toilet wifi seating terrace queue waiting line opening closing hours schedule calendar date deadline period
guarantee condition term policy rule law regulation privacy data consent cookie newsletter membership loyalty point reward
bonus coupon promotion campaign launch event tasting workshop course class barista training certificate lesson demonstration
review rating feedback complaint compliment survey support helpdesk hotline chat callback ticket case reference request
registration login password profile setting preference language region country city village area zone postcode`;

const DE_HEAD = `kaffee maschine bestellung preis lieferung espresso milch wasser mühle kunde tag service garantie rückgabe tasse
bohne reparatur zeit laden woche monat jahr filiale modell teil filter pumpe boiler druck temperatur einstellung taste
anzeige reinigung entkalkung milchaufschäumer kapsel tank schale brühgruppe bezug cappuccino latte mahlgrad menge
siebträger sieb dampf lanze heiß kalt frisch röstung dunkel hell mittel mischung herkunft arabica robusta geschmack aroma
crema stärke paket sendung versand adresse rechnung zahlung karte konto erstattung beleg rabatt gutschein geschenk abo
angebot verkauf lager verfügbarkeit farbe edelstahl schwarz weiß silber chrom kunststoff glas kabel stecker strom steckdose
spannung watt liter gramm minute stunde morgen nachmittag abend wochenende feiertag termin besuch theke techniker team
mitarbeiter leitung telefon nachricht formular webseite update fehler code lampe warnung signal sensor ventil dichtung
schlauch düse auslauf deckel abdeckung griff knopf regler hebel schalter bildschirm menü programm profil anleitung handbuch
schritt tipp rat frage antwort problem lösung störung defekt schaden riss undichtigkeit geräusch geruch rauch hitze
ersatzteil zubehör set tablette entkalker reiniger bürste tuch schwamm kännchen thermometer waage haushalt büro
restaurant café bar hotel küche tisch regal schrank platz größe breite höhe tiefe gewicht fassungsvermögen volumen
portion rezept getränk tee schokolade sirup zucker sahne schaum konsistenz extraktion verhältnis motor mahlwerk
geschwindigkeit lautstärke energie modus kauf händler partner marke serie ausgabe version tausch miete leasing finanzierung
rate kredit überweisung bargeld bank gebühr kosten summe steuer mehrwertsteuer kurier fahrer zeitfenster sendungsnummer
bestätigung benachrichtigung erinnerung abholung packstation standort bezirk straße platz bahnhof parkplatz eingang etage
aufzug treppe barrierefrei toilette sitzplatz terrasse warteschlange öffnungszeit schließung plan kalender datum frist
bedingung regel gesetz datenschutz daten einwilligung newsletter mitgliedschaft treuepunkte prämie aktion verkostung
kurs schulung zertifikat vorführung bewertung rückmeldung beschwerde umfrage hilfe rückruf anfrage anmeldung passwort
sprache region land stadt dorf gebiet postleitzahl`;

const EN_FUNCTION = `the a an to and of for with your you we our is are be can will in on at by from this that it not or as if all
please also only when then there here any some each every more most much very just before after during until within about
into over under up out than so but because while which who what how where`.split(/\s+/);
const DE_FUNCTION = `der die das ein eine und zu mit für von bei ihr ihre sie wir unser ist sind wird kann können im in am auf aus dem den des
nicht oder wie wenn dann dort hier jede jeder mehr sehr nur auch vor nach während bis innerhalb über unter als weil welche was wo`.split(
  /\s+/,
);

const EN_TAIL_SYLLABLES = ['ka', 'lo', 'mer', 'tin', 'ber', 'sol', 'ven', 'dra', 'pel', 'quin', 'ron', 'sta', 'lix', 'mon', 'tor', 'vel', 'har', 'pri', 'cor', 'bel', 'nis', 'fen', 'gar', 'tal', 'sen', 'rup', 'dol', 'mat', 'ric', 'wen'];
const DE_TAIL_SYLLABLES = ['schaf', 'ter', 'lung', 'keit', 'bau', 'stein', 'wer', 'ge', 'ber', 'mann', 'ru', 'fel', 'hof', 'wald', 'brun', 'heit', 'zug', 'kamm', 'lich', 'dorn', 'schu', 'berg', 'feld', 'gang', 'werk', 'rat', 'hau', 'mül', 'sch', 'ner'];

const BRANDS = [
  'Brevora', 'Caffissimo', 'Moccaroma', 'Tazzeria', 'Lungaro', 'Crematic', 'Barissa', 'Espressia', 'Kaffwerk', 'Röstmann',
  'Vaporetti', 'Granocci', 'Milano Uno', 'Portafina', 'Bohnwerk', 'Aromatica', 'Cremona', 'Doppio', 'Macinato', 'Ristrella',
  'Tamperio', 'Velluto', 'Schaumhaus', 'Mahlberg', 'Kaffeeland', 'Caldera', 'Presso', 'Ferrocaffè', 'Nordbohne', 'Sorrenta',
  'Arabesca', 'Torrefa', 'Vapore', 'Grindhaus', 'Cupola', 'Lattissa', 'Brühmeister', 'Kornfeld', 'Cimbali Nova', 'Rocco',
];
const MODEL_SERIES = ['X', 'Pro', 'S', 'One', 'Duo', 'Mini', 'Max', 'Plus', 'Classic', 'Touch', 'Barista', 'Home', 'LT', 'EVO'];
const KINDS = {
  en: ['espresso machine', 'bean-to-cup machine', 'grinder', 'filter coffee machine', 'milk frother', 'capsule machine', 'portafilter machine'],
  de: ['Espressomaschine', 'Kaffeevollautomat', 'Kaffeemühle', 'Filterkaffeemaschine', 'Milchaufschäumer', 'Kapselmaschine', 'Siebträgermaschine'],
} as const;
const CITIES = [
  'Berlin', 'Potsdam', 'Hamburg', 'München', 'Köln', 'Frankfurt', 'Stuttgart', 'Düsseldorf', 'Leipzig', 'Dresden', 'Hannover',
  'Nürnberg', 'Bremen', 'Essen', 'Dortmund', 'Bonn', 'Münster', 'Mannheim', 'Karlsruhe', 'Augsburg', 'Freiburg', 'Kiel',
  'Rostock', 'Erfurt', 'Mainz', 'Wiesbaden', 'Heidelberg', 'Regensburg', 'Würzburg', 'Lübeck', 'Magdeburg', 'Halle',
  'Braunschweig', 'Osnabrück', 'Göttingen', 'Jena', 'Ulm', 'Konstanz', 'Trier', 'Aachen',
];
const DISTRICTS = [
  'Mitte', 'Altstadt', 'Nord', 'Süd', 'West', 'Ost', 'Hafen', 'Bahnhof', 'Zentrum', 'Kreuzberg', 'Schwabing', 'Ehrenfeld',
  'Sachsenhausen', 'Neustadt', 'Südstadt', 'Lindenau', 'Eimsbüttel', 'Bockenheim', 'Prenzlauer Berg', 'Charlottenburg',
];
const STREETS = ['Market Street', 'Station Road', 'Hauptstraße', 'Bahnhofstraße', 'Schillerstraße', 'Lindenallee', 'Marktplatz', 'Goethestraße', 'Kirchweg', 'Hafenstraße', 'Gartenstraße', 'Mühlenweg'];
const DAYS = {
  en: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'],
  de: ['Montag', 'Dienstag', 'Mittwoch', 'Donnerstag', 'Freitag', 'Samstag', 'Sonntag'],
} as const;
const PROBLEMS = {
  en: ['No water comes out', 'The coffee is too cold', 'The grinder is blocked', 'Error E{n} on the display', 'The milk does not foam', 'Water under the machine', 'The pump is loud', 'The machine does not switch on', 'The coffee tastes sour', 'Steam leaks from the wand'],
  de: ['Es kommt kein Wasser', 'Der Kaffee ist zu kalt', 'Das Mahlwerk ist blockiert', 'Fehler E{n} im Display', 'Die Milch schäumt nicht', 'Wasser unter der Maschine', 'Die Pumpe ist laut', 'Die Maschine geht nicht an', 'Der Kaffee schmeckt sauer', 'Dampf tritt an der Lanze aus'],
} as const;

/** A made-up product of the catalogue. */
interface Product {
  readonly brand: string;
  readonly model: string;
  readonly kind: number;
  /** In euros. */
  readonly price: number;
}

/** Places and products every folder and the questions draw from: the same for every size. */
interface Catalogue {
  readonly products: readonly Product[];
  readonly shops: readonly { city: string; district: string }[];
}

const CATALOGUE_SEED = 20_240_611;

function makeCatalogue(): Catalogue {
  const random = seededRandom(CATALOGUE_SEED);
  const products: Product[] = [];
  const seen = new Set<string>();
  while (products.length < 1_200) {
    const brand = pick(random, BRANDS);
    const model = `${pick(random, MODEL_SERIES)} ${Math.floor(random() * 9 + 1) * (random() < 0.5 ? 100 : 10)}`;
    const key = `${brand} ${model}`;
    if (seen.has(key)) continue;
    seen.add(key);
    products.push({ brand, model, kind: Math.floor(random() * KINDS.en.length), price: Math.round((49 + random() * 2_400) * 100) / 100 - 0.01 });
  }
  const shops = CITIES.flatMap((city) => DISTRICTS.map((district) => ({ city, district })));
  return { products, shops: shuffle(seededRandom(CATALOGUE_SEED + 1), shops) };
}

const CATALOGUE = makeCatalogue();

/** Words of one language, sampled by Zipf's law over its vocabulary. */
class Words {
  private readonly words: string[];
  private readonly cumulative: Float64Array;

  constructor(head: string, syllables: readonly string[], size: number, random: Random) {
    const words = [...new Set(head.split(/\s+/).filter(Boolean))];
    const known = new Set(words);
    while (words.length < size) {
      const parts = 2 + Math.floor(random() * 3);
      let word = '';
      for (let i = 0; i < parts; i++) word += pick(random, syllables);
      if (known.has(word)) continue;
      known.add(word);
      words.push(word);
    }
    this.words = words;
    this.cumulative = new Float64Array(words.length);
    let total = 0;
    for (let rank = 0; rank < words.length; rank++) {
      total += 1 / (rank + 1) ** ZIPF_S;
      this.cumulative[rank] = total;
    }
    for (let rank = 0; rank < words.length; rank++) this.cumulative[rank]! /= total;
  }

  get size(): number {
    return this.words.length;
  }

  draw(random: Random): string {
    const x = random();
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function shuffle<T>(random: Random, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

const euros = (lang: Lang, amount: number): string => (lang === 'en' ? `€${amount.toFixed(2)}` : `${amount.toFixed(2).replace('.', ',')} €`);
const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
const slug = (text: string): string =>
  text
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** What a sentence may name: the file's product or shop, and things of its own. */
interface Slots {
  readonly product: Product | undefined;
  readonly shop: { city: string; district: string } | undefined;
}

/** Sentences of each kind of section, `{…}` filled per sentence. */
const TEMPLATES: Record<Lang, Record<string, readonly string[]>> = {
  en: {
    product: [
      'The {product} costs {price} and comes with a {years}-year warranty.',
      'The {product} is a {kind} with a {litres}-litre water tank and a {bar}-bar pump.',
      'We have the {product} in stock in {colour}; other colours take {days} days to arrive.',
      'Customers who bought the {product} often add the {other} to their order.',
      'The {product} heats up in {seconds} seconds and brews two cups at once.',
      'Its grinder has {settings} settings, from fine for espresso to coarse for filter coffee.',
    ],
    care: [
      'Descale the {product} every {weeks} weeks, or when the descaling light comes on.',
      'Use one descaling tablet per tank and run the program, which takes about {minutes} minutes.',
      'Rinse the milk frother after every use and clean it with a cleaning tablet once a week.',
      'Empty the drip tray daily and wash the brewing unit under warm water without soap.',
      'Hard water in {city} means you should descale more often, about every {weeks} weeks.',
    ],
    trouble: [
      'If the display shows error E{code}, switch the {product} off, wait {seconds} seconds and switch it on again.',
      'Check that the water tank is seated properly and that the filter is not blocked.',
      'If the problem stays, call our repair service on {phone}; a repair usually takes {days} working days.',
      'A loud pump often means the tank is empty or air is in the system: fill the tank and run hot water for a minute.',
      'Sour coffee is usually ground too coarse: turn the grinder {steps} steps finer.',
    ],
    shop: [
      'Our shop in {city} {district} is at {number} {street}, {minutes} minutes from the station.',
      'We are open Monday to Friday from {open} to {close}, and on Saturdays from {satOpen} to {satClose}.',
      'Parking is free for the first {hours} hours in the garage behind the shop.',
      'The repair counter in {city} takes machines of every brand, with a quote within {days} days.',
      'Barista courses in {city} run every {day} evening and cost {price} per person.',
    ],
    policy: [
      'We deliver within {city} and to {other city} for {price}, and free for orders above {threshold}.',
      'You can return anything you bought within {days} days, with the receipt or the order number.',
      'Refunds are paid within {days} business days, the way you paid.',
      'We accept cards, PayPal, bank transfer and payment on invoice for orders up to {threshold}.',
      'Deliveries arrive on {day}s between {open} and {close}; we call you the day before.',
      'A subscription of {grams} grams of beans every {weeks} weeks costs {price} including delivery.',
    ],
  },
  de: {
    product: [
      'Die {product} kostet {price} und hat {years} Jahre Garantie.',
      'Die {product} ist eine {kind} mit einem {litres}-Liter-Wassertank und einer Pumpe mit {bar} bar.',
      'Die {product} ist in {colour} auf Lager; andere Farben brauchen {days} Tage.',
      'Wer die {product} kauft, bestellt oft die {other} dazu.',
      'Die {product} ist in {seconds} Sekunden aufgeheizt und brüht zwei Tassen auf einmal.',
      'Das Mahlwerk hat {settings} Stufen, von fein für Espresso bis grob für Filterkaffee.',
    ],
    care: [
      'Entkalken Sie die {product} alle {weeks} Wochen oder wenn die Entkalkungslampe leuchtet.',
      'Nehmen Sie eine Entkalkungstablette pro Tank; das Programm dauert etwa {minutes} Minuten.',
      'Spülen Sie den Milchaufschäumer nach jedem Bezug und reinigen Sie ihn einmal pro Woche mit einer Reinigungstablette.',
      'Leeren Sie die Abtropfschale täglich und spülen Sie die Brühgruppe ohne Spülmittel unter warmem Wasser ab.',
      'Das harte Wasser in {city} bedeutet: öfter entkalken, etwa alle {weeks} Wochen.',
    ],
    trouble: [
      'Zeigt das Display den Fehler E{code}, schalten Sie die {product} aus, warten {seconds} Sekunden und schalten sie wieder ein.',
      'Prüfen Sie, ob der Wassertank richtig sitzt und der Filter nicht verstopft ist.',
      'Bleibt die Störung, rufen Sie unseren Reparaturservice unter {phone} an; eine Reparatur dauert meist {days} Werktage.',
      'Eine laute Pumpe bedeutet oft einen leeren Tank oder Luft im System: Tank füllen und eine Minute heißes Wasser beziehen.',
      'Saurer Kaffee ist meist zu grob gemahlen: stellen Sie das Mahlwerk {steps} Stufen feiner.',
    ],
    shop: [
      'Unsere Filiale in {city} {district} ist in der {street} {number}, {minutes} Minuten vom Bahnhof.',
      'Geöffnet ist Montag bis Freitag von {open} bis {close} Uhr und samstags von {satOpen} bis {satClose} Uhr.',
      'Im Parkhaus hinter der Filiale parken Sie die ersten {hours} Stunden kostenlos.',
      'Die Reparaturannahme in {city} nimmt Maschinen aller Marken an, mit Kostenvoranschlag innerhalb von {days} Tagen.',
      'Baristakurse in {city} finden jeden {day}abend statt und kosten {price} pro Person.',
    ],
    policy: [
      'Wir liefern in ganz {city} und nach {other city} für {price}, ab {threshold} Bestellwert kostenlos.',
      'Alles, was Sie bei uns kaufen, können Sie innerhalb von {days} Tagen mit Beleg oder Bestellnummer zurückgeben.',
      'Erstattungen zahlen wir innerhalb von {days} Werktagen auf dem Weg zurück, auf dem Sie bezahlt haben.',
      'Sie können mit Karte, PayPal, Überweisung oder bis {threshold} auf Rechnung bezahlen.',
      'Geliefert wird {day}s zwischen {open} und {close} Uhr; wir rufen am Tag vorher an.',
      'Ein Abo mit {grams} Gramm Bohnen alle {weeks} Wochen kostet {price} inklusive Lieferung.',
    ],
  },
};

const COLOURS = { en: ['black', 'white', 'silver', 'red', 'steel'], de: ['Schwarz', 'Weiß', 'Silber', 'Rot', 'Edelstahl'] } as const;

const productName = (p: Product): string => `${p.brand} ${p.model}`;

function fill(template: string, lang: Lang, slots: Slots, random: Random): string {
  const product = slots.product ?? pick(random, CATALOGUE.products);
  const shop = slots.shop ?? pick(random, CATALOGUE.shops);
  const int = (from: number, to: number): number => from + Math.floor(random() * (to - from + 1));
  const hour = (h: number): string => (lang === 'en' ? `${h > 12 ? h - 12 : h} ${h >= 12 ? 'pm' : 'am'}` : `${h}:00`);
  return template.replace(/\{([a-zA-Z ]+)\}/g, (_, name: string) => {
    switch (name) {
      case 'product':
        return productName(product);
      case 'other':
        return productName(pick(random, CATALOGUE.products));
      case 'kind':
        return KINDS[lang][product.kind]!;
      case 'price':
        return euros(lang, slots.product ? product.price : int(5, 90) + 0.9);
      case 'threshold':
        return euros(lang, int(5, 30) * 10);
      case 'city':
        return shop.city;
      case 'other city':
        return pick(random, CITIES);
      case 'district':
        return shop.district;
      case 'street':
        return pick(random, STREETS);
      case 'colour':
        return pick(random, COLOURS[lang]);
      case 'day':
        return DAYS[lang][int(0, 5)]!;
      case 'open':
        return hour(int(7, 10));
      case 'close':
        return hour(int(17, 20));
      case 'satOpen':
        return hour(int(9, 10));
      case 'satClose':
        return hour(int(13, 16));
      case 'phone':
        return `030 ${int(100, 999)} ${int(1000, 9999)}`;
      case 'code':
        return String(int(1, 99));
      case 'years':
        return String(int(1, 5));
      case 'litres':
        return (int(8, 30) / 10).toFixed(1);
      case 'bar':
        return String(int(9, 19));
      case 'seconds':
        return String(int(3, 60));
      case 'settings':
        return String(int(5, 40));
      case 'steps':
        return String(int(1, 4));
      case 'weeks':
        return String(int(2, 12));
      case 'minutes':
        return String(int(5, 30));
      case 'hours':
        return String(int(1, 3));
      case 'grams':
        return String(int(2, 10) * 100);
      case 'number':
        return String(int(1, 180));
      default:
        return String(int(1, 30));
    }
  });
}

/** Sections of one kind of page: a heading and the sentences it is written from. */
interface SectionPlan {
  readonly heading: string;
  readonly topic: string;
}

const PRODUCT_SECTIONS: Record<Lang, readonly SectionPlan[]> = {
  en: [
    { heading: 'Overview', topic: 'product' },
    { heading: 'Technical data', topic: 'product' },
    { heading: 'In the box', topic: 'product' },
    { heading: 'Setting up', topic: 'care' },
    { heading: 'Grind settings', topic: 'product' },
    { heading: 'Frothing milk', topic: 'care' },
    { heading: 'Daily cleaning', topic: 'care' },
    { heading: 'Descaling', topic: 'care' },
    { heading: 'Warranty', topic: 'policy' },
    { heading: 'Spare parts', topic: 'product' },
    { heading: 'Accessories', topic: 'product' },
    { heading: 'Price and availability', topic: 'product' },
  ],
  de: [
    { heading: 'Überblick', topic: 'product' },
    { heading: 'Technische Daten', topic: 'product' },
    { heading: 'Lieferumfang', topic: 'product' },
    { heading: 'Aufstellen', topic: 'care' },
    { heading: 'Mahlgrad', topic: 'product' },
    { heading: 'Milch aufschäumen', topic: 'care' },
    { heading: 'Tägliche Reinigung', topic: 'care' },
    { heading: 'Entkalken', topic: 'care' },
    { heading: 'Garantie', topic: 'policy' },
    { heading: 'Ersatzteile', topic: 'product' },
    { heading: 'Zubehör', topic: 'product' },
    { heading: 'Preis und Verfügbarkeit', topic: 'product' },
  ],
};
const SHOP_SECTIONS: Record<Lang, readonly SectionPlan[]> = {
  en: ['Address', 'Opening hours', 'Holidays', 'Parking', 'Getting here', 'Repair counter', 'Courses and tastings', 'Payment in the shop', 'Our team', 'Collecting orders'].map((heading) => ({
    heading,
    topic: 'shop',
  })),
  de: ['Adresse', 'Öffnungszeiten', 'Feiertage', 'Parken', 'Anfahrt', 'Reparaturannahme', 'Kurse und Verkostungen', 'Bezahlen im Laden', 'Unser Team', 'Bestellungen abholen'].map((heading) => ({
    heading,
    topic: 'shop',
  })),
};
const HELP_TOPICS: Record<Lang, readonly string[]> = {
  en: ['Delivery', 'Returns', 'Refunds', 'Payment', 'Warranty claims', 'Repairs', 'Subscriptions', 'Coffee beans', 'Recipes', 'Privacy', 'Business customers', 'Gift vouchers'],
  de: ['Lieferung', 'Rückgabe', 'Erstattung', 'Zahlung', 'Garantiefälle', 'Reparaturen', 'Abonnements', 'Kaffeebohnen', 'Rezepte', 'Datenschutz', 'Geschäftskunden', 'Gutscheine'],
};

/** The figures of a folder written. */
export interface KnowledgeFolderFigures {
  readonly dir: string;
  readonly files: number;
  /** Sections with words: one passage each. */
  readonly passages: number;
  readonly bytes: number;
  /** Of the passages, in German. */
  readonly germanPassages: number;
}

/** The vocabulary the documents are written with, for the report. */
export const VOCABULARY_NOTE =
  `words drawn by Zipf's law (s = ${ZIPF_S}) from ${VOCABULARY.en.toLocaleString('en-US')} English and ` +
  `${VOCABULARY.de.toLocaleString('en-US')} German words (the shop's commonest first, made-up ones in the tail), with ` +
  `${CATALOGUE.products.length.toLocaleString('en-US')} products, ${BRANDS.length} brands, ${CITIES.length} cities × ` +
  `${DISTRICTS.length} districts, prices, times and codes`;

/** Writes `passages` passages' worth of Markdown under `dir` (created), about a fifth of them German under de/. */
export async function writeKnowledgeFolder(dir: string, passages: number, seed: number): Promise<KnowledgeFolderFigures> {
  const random = seededRandom(seed * 7_919 + passages);
  const words = {
    en: new Words(EN_HEAD, EN_TAIL_SYLLABLES, VOCABULARY.en, seededRandom(seed + 11)),
    de: new Words(DE_HEAD, DE_TAIL_SYLLABLES, VOCABULARY.de, seededRandom(seed + 13)),
  };
  let written = 0;
  let files = 0;
  let bytes = 0;
  let germanPassages = 0;
  const folders = new Set<string>();
  let productIndex = 0;
  let shopIndex = 0;
  let helpIndex = 0;
  const pending: Promise<void>[] = [];
  while (written < passages) {
    const lang: Lang = random() < GERMAN_SHARE ? 'de' : 'en';
    const kind = random();
    let page: { file: string; text: string; sections: number };
    const left = passages - written;
    if (kind < 0.6) page = productPage(lang, CATALOGUE.products[productIndex++ % CATALOGUE.products.length]!, productIndex, left, words[lang], random);
    else if (kind < 0.75) page = shopPage(lang, CATALOGUE.shops[shopIndex++ % CATALOGUE.shops.length]!, shopIndex, left, words[lang], random);
    else page = helpPage(lang, helpIndex++, left, words[lang], random);
    const file = path.join(dir, lang === 'de' ? 'de' : '', page.file);
    const folder = path.dirname(file);
    if (!folders.has(folder)) {
      await mkdir(folder, { recursive: true });
      folders.add(folder);
    }
    const content = Buffer.from(page.text, 'utf8');
    pending.push(writeFile(file, content));
    if (pending.length >= 32) await Promise.all(pending.splice(0));
    written += page.sections;
    if (lang === 'de') germanPassages += page.sections;
    files += 1;
    bytes += content.length;
  }
  await Promise.all(pending);
  return { dir, files, passages: written, bytes, germanPassages };
}

type Page = { file: string; text: string; sections: number };

function productPage(lang: Lang, product: Product, index: number, left: number, words: Words, random: Random): Page {
  const name = productName(product);
  const lines = [`# ${name}`, ''];
  const slots: Slots = { product, shop: undefined };
  const plan = [...PRODUCT_SECTIONS[lang]];
  // Troubleshooting: a subsection per problem, as real manuals have.
  const problems = shuffle(random, PROBLEMS[lang]).slice(0, 3 + Math.floor(random() * 8));
  let sections = 0;
  const budget = Math.min(left, 8 + Math.floor(random() * 40));
  for (const section of plan) {
    if (sections >= budget) break;
    lines.push(`## ${section.heading}`, ...sectionBody(lang, section.topic, slots, words, random), '');
    sections++;
  }
  if (sections < budget) lines.push(`## ${lang === 'en' ? 'Troubleshooting' : 'Fehlerbehebung'}`, '');
  for (const problem of problems) {
    if (sections >= budget) break;
    lines.push(`### ${problem.replace('{n}', String(1 + Math.floor(random() * 60)))}`, ...sectionBody(lang, 'trouble', slots, words, random), '');
    sections++;
  }
  // Long manuals: more numbered notes until the page has its sections.
  for (let note = 1; sections < budget; note++, sections++) {
    lines.push(`## ${lang === 'en' ? 'Note' : 'Hinweis'} ${note}`, ...sectionBody(lang, pick(random, ['care', 'product', 'trouble']), slots, words, random), '');
  }
  const folder = lang === 'en' ? 'products' : 'produkte';
  return { file: path.join(folder, `${slug(name)}-${index}.md`), text: lines.join('\n'), sections };
}

function shopPage(lang: Lang, shop: { city: string; district: string }, index: number, left: number, words: Words, random: Random): Page {
  const lines = [`# ${lang === 'en' ? 'Our shop in' : 'Unsere Filiale in'} ${shop.city} ${shop.district}`, ''];
  const slots: Slots = { product: undefined, shop };
  const budget = Math.min(left, SHOP_SECTIONS[lang].length);
  let sections = 0;
  for (const section of SHOP_SECTIONS[lang].slice(0, budget)) {
    lines.push(`## ${section.heading}`);
    if (section.heading === 'Opening hours' || section.heading === 'Öffnungszeiten') {
      // A table: one block per row, as the splitter keeps them.
      lines.push('', `| ${lang === 'en' ? 'Day' : 'Tag'} | ${lang === 'en' ? 'Open' : 'Geöffnet'} |`, '| --- | --- |');
      for (const day of DAYS[lang]) lines.push(`| ${day} | ${day === 'Sunday' || day === 'Sonntag' ? '–' : `${7 + Math.floor(random() * 3)}:00–${17 + Math.floor(random() * 4)}:00`} |`);
      lines.push('');
    } else {
      lines.push(...sectionBody(lang, section.topic, slots, words, random), '');
    }
    sections++;
  }
  return { file: path.join(lang === 'en' ? 'shops' : 'filialen', `${slug(`${shop.city} ${shop.district}`)}-${index}.md`), text: lines.join('\n'), sections };
}

function helpPage(lang: Lang, index: number, left: number, words: Words, random: Random): Page {
  const topic = HELP_TOPICS[lang][index % HELP_TOPICS[lang].length]!;
  const lines = [`# ${topic}`, ''];
  const slots: Slots = { product: undefined, shop: undefined };
  const budget = Math.min(left, 5 + Math.floor(random() * 30));
  for (let section = 0; section < budget; section++) {
    const city = pick(random, CITIES);
    const heading = lang === 'en' ? `${topic} ${pick(random, ['in', 'for', 'to', 'from'])} ${city}` : `${topic} ${pick(random, ['in', 'für', 'nach', 'aus'])} ${city}`;
    lines.push(`## ${heading}`, ...sectionBody(lang, 'policy', { ...slots, shop: { city, district: pick(random, DISTRICTS) } }, words, random), '');
  }
  return { file: path.join(lang === 'en' ? 'help' : 'hilfe', `${slug(topic)}-${index}.md`), text: lines.join('\n'), sections: budget };
}

/** A section's paragraphs: sentences of its topic and sentences of drawn words, 150–950 characters in all. */
function sectionBody(lang: Lang, topic: string, slots: Slots, words: Words, random: Random): string[] {
  // Mostly medium sections, some short, a few near the limit.
  const target = 150 + Math.floor(random() ** 1.5 * (SECTION_MAX_CHARS - 150));
  const paragraphs: string[] = [];
  let paragraph: string[] = [];
  let length = 0;
  const templates = TEMPLATES[lang][topic] ?? TEMPLATES[lang].product!;
  while (length < target) {
    const sentence = random() < 0.45 ? fill(pick(random, templates), lang, slots, random) : drawnSentence(lang, words, random);
    // Blocks are joined with "\n", paragraphs' sentences with " ": one character each.
    if (length + sentence.length + 1 > SECTION_MAX_CHARS) break;
    paragraph.push(sentence);
    length += sentence.length + 1;
    if (paragraph.length >= 2 + Math.floor(random() * 3)) {
      paragraphs.push(paragraph.join(' '));
      paragraph = [];
    }
  }
  if (paragraph.length > 0) paragraphs.push(paragraph.join(' '));
  if (paragraphs.length === 0) paragraphs.push(fill(pick(random, templates), lang, slots, random));
  // A blank line between paragraphs: each is a block of its own.
  return ['', ...paragraphs.flatMap((p, i) => (i === 0 ? [p] : ['', p]))];
}

/** A sentence of drawn words between function words: grammar aside, the words' frequencies are a text's. */
function drawnSentence(lang: Lang, words: Words, random: Random): string {
  const length = 6 + Math.floor(random() * 12);
  const functionWords = lang === 'en' ? EN_FUNCTION : DE_FUNCTION;
  const out: string[] = [];
  for (let i = 0; i < length; i++) {
    if (random() < 0.4) out.push(pick(random, functionWords));
    else {
      const word = words.draw(random);
      // German nouns are capitalised; most of the vocabulary is nouns.
      out.push(lang === 'de' && random() < 0.7 ? capitalize(word) : word);
    }
  }
  if (random() < 0.1) out.splice(Math.floor(random() * out.length), 0, String(Math.floor(random() * 500)));
  return `${capitalize(out.join(' '))}.`;
}

/** What callers ask: mostly about the shop (products, places, policies), some about nothing it knows. */
export function benchQuestions(count: number, seed: number): string[] {
  const random = seededRandom(seed * 104_729 + count);
  const product = (): string => productName(pick(random, CATALOGUE.products));
  const shop = (): { city: string; district: string } => pick(random, CATALOGUE.shops);
  const day = (lang: Lang): string => pick(random, DAYS[lang]);
  const asked: (() => string)[] = [
    () => `How much does the ${product()} cost?`,
    () => `Do you deliver to ${shop().city}?`,
    () => `When is your shop in ${shop().city} ${shop().district} open on ${day('en')}?`,
    () => `How do I descale my ${product()}?`,
    () => `My ${product()} shows error E${1 + Math.floor(random() * 60)} on the display, what can I do?`,
    () => `Can I return a grinder I bought three weeks ago?`,
    () => `Is there a warranty on the ${product()}, and how long is it?`,
    () => `Which milk frother fits the ${pick(random, BRANDS)} machines?`,
    () => `Do you accept PayPal, or can I pay on invoice?`,
    () => `How long does a repair take at the ${shop().city} shop?`,
    () => `The coffee from my ${product()} tastes sour, what am I doing wrong?`,
    () => `Is there parking near the shop in ${shop().city}?`,
    () => `I'd like a subscription for espresso beans every four weeks, how much is that?`,
    () => `Wie lange dauert die Lieferung nach ${shop().city}?`,
    () => `Was kostet die Reparatur einer ${product()}?`,
    () => `Wann hat die Filiale in ${shop().city} am ${day('de')} geöffnet?`,
    () => `Wie entkalke ich meine ${product()}?`,
    () => `Kann ich eine benutzte Kaffeemühle zurückgeben?`,
  ];
  const unrelated = [
    "What's the weather going to be like tomorrow?",
    'Can you book me a table for two tonight?',
    "I'd like to speak to someone about my neighbour's dog.",
    'Is the football match on television this evening?',
    'yes please',
    'okay, thank you, bye',
    'Hello, who am I speaking to?',
    'Können Sie mir ein Taxi zum Flughafen rufen?',
    'How tall is the Eiffel tower?',
    'My internet connection keeps dropping, can you fix it?',
  ];
  return Array.from({ length: count }, () => (random() < 0.75 ? pick(random, asked)() : pick(random, unrelated)));
}
