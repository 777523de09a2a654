import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ssmlDocument, stripSsml } from '../src/call/speech/ssml.js';
import { parsePronunciations, readPronunciations } from '../src/prompts/pronunciations-file.js';
import { layerPronunciations, NO_PRONUNCIATIONS, type Pronouncer, type PronunciationProblem } from '../src/prompts/pronunciations.js';

const FILE = 'pronunciations.yaml';

function load(yaml: string): Pronouncer {
  const { pronouncer, problems } = parsePronunciations(yaml, FILE);
  expect(problems).toEqual([]);
  return pronouncer;
}

function problemsOf(yaml: string): string[] {
  return parsePronunciations(yaml, FILE).problems.map((p) => `${p.severity}: ${p.message}`);
}

const EXAMPLE = `# word or phrase → how it is said
sipgate: sip gate                       # a respelling: said as written here
Müller-Lüdenscheidt: Müller Lüdenscheid
Nguyen: { say: Nwin, ipa: "ŋwiən" }     # ipa where the voice reads SSML
/\\bGmbH\\b/: G m b H                    # a regular expression between slashes
`;

/**
 * Well-formed XML, as far as an SSML document goes: tags nest and close, attributes are
 * quoted and hold no markup, text holds no `<` and only entities after `&`.
 */
function wellFormed(xml: string): boolean {
  const token = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<&]*(?:&(?:amp|lt|gt|quot|apos);[^"<&]*)*")*)\s*(\/?)>|([^<]+)/gy;
  const open: string[] = [];
  let at = 0;
  for (let match = token.exec(xml); match !== null; match = token.exec(xml)) {
    at = token.lastIndex;
    const [, closing, name, , selfClosing, text] = match;
    if (text !== undefined) {
      if (/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/iu.test(text)) return false;
    } else if (selfClosing) {
      if (closing) return false;
    } else if (closing) {
      if (open.pop() !== name) return false;
    } else {
      open.push(name!);
    }
  }
  return at === xml.length && open.length === 0 && xml.startsWith('<speak>');
}

describe('pronunciations.yaml: reading it', () => {
  it('reads the four forms: a respelling, say and ipa, a phrase, a regular expression', () => {
    const p = load(EXAMPLE);
    expect(p.size).toBe(4);
    expect(p.text('Call sipgate, Nguyen or Müller-Lüdenscheidt GmbH.')).toBe('Call sip gate, Nwin or Müller Lüdenscheid G m b H.');
  });

  it('nothing to apply: an empty file, comments only, no file', () => {
    for (const yaml of ['', '# nothing yet\n', '\n\n']) {
      const { pronouncer, problems } = parsePronunciations(yaml, FILE);
      expect(pronouncer).toBe(NO_PRONUNCIATIONS);
      expect(problems).toEqual([]);
    }
    expect(NO_PRONUNCIATIONS.size).toBe(0);
    expect(NO_PRONUNCIATIONS.text('sipgate')).toBe('sipgate');
    expect(NO_PRONUNCIATIONS.ssml('<break/>sipgate')).toBe('<break/>sipgate');
  });

  it('every problem with its file, severity and line; a broken entry is left out, the others apply', () => {
    const yaml = [
      'sipgate: sip gate', // 1
      'Nguyen: {}', // 2
      'empty:', // 3
      '"": blank', // 4
      'list: [a, b]', // 5
      'Nguyen2: { sai: x, say: Nwin }', // 6
      "Quote: { ipa: 'kwəʊ\"t' }", // 7
      'Tags: { say: <b>Tags</b> }', // 8
      'Nested: { say: [x] }', // 9
      'Sounds: { ipa: x, alphabet: arpabet }', // 10
      '/(/: x', // 11
      '/a*/: x', // 12
      '/x/q: y', // 13
      '"/\\bAG\\b/": A G', // 14
      'SIPGATE: Sip Gate', // 15
      '? [k]', // 16
      ': v', // 17
      'Ok: fine', // 18
    ].join('\n');
    const { pronouncer, problems } = parsePronunciations(yaml, FILE);
    expect(problems.every((p: PronunciationProblem) => p.file === FILE)).toBe(true);
    expect(problems.map((p) => `${p.severity}: ${p.message}`)).toEqual([
      'error: line 2: "Nguyen" has neither say nor ipa',
      'error: line 3: "empty" has nothing after the colon: write a respelling, or { say: …, ipa: … }',
      'error: line 4: the key is empty: write the word or phrase before the colon',
      'error: line 5: "list" must be a respelling, or { say: …, ipa: … }, not a list',
      'warning: line 6: "Nguyen2": unknown field "sai" is ignored (known: say, ipa, alphabet)',
      `error: line 7: "Quote": ipa must not hold '"' (IPA's stress mark is ˈ)`,
      'warning: line 8: "Tags": "<" and ">" are left out of the respelling: it is said as plain text',
      'error: line 9: "Nested": say must be text',
      'error: line 10: "Sounds": alphabet must be ipa or x-sampa, not "arpabet"',
      'error: line 11: "/(/" is not a valid regular expression: Unterminated group',
      'error: line 12: "/a*/" matches an empty text, so it would match everywhere',
      'error: line 13: "/x/q": unknown flag "q" after the last slash (known: i, m, s)',
      `error: line 14: "/\\bAG\\b/" holds a control character, as YAML makes of \\b in "double quotes": write the key unquoted or in 'single quotes'`,
      'warning: line 15: "SIPGATE" is already on line 1; the later one is used',
      'error: line 16: a key must be a word, a phrase or a /regular expression/',
    ]);
    // sipgate (the later one), Nguyen2, Tags, Ok.
    expect(pronouncer.size).toBe(4);
    expect(pronouncer.text('sipgate Nguyen2 Tags Ok Nguyen empty AG')).toBe('Sip Gate Nwin bTags/b fine Nguyen empty AG');
  });

  it('YAML that does not parse: its line, and nothing applied', () => {
    const { pronouncer, problems } = parsePronunciations('sipgate: sip gate\nNguyen: { say: Nwin\nx: y\n', FILE);
    expect(pronouncer).toBe(NO_PRONUNCIATIONS);
    expect(problems).toEqual([
      { file: FILE, severity: 'error', message: 'line 3: not valid YAML: Flow map in block collection must be sufficiently indented and end with a }' },
    ]);
  });

  it('a file that is no mapping', () => {
    expect(problemsOf('- sipgate\n- Nguyen\n')).toEqual(['error: line 1: the file must be lines of "word: how it is said"']);
    expect(problemsOf('# a word\n\nsipgate\n')).toEqual(['error: line 3: the file must be lines of "word: how it is said"']);
  });

  it('numbers and YAML words are words here; single-quoted regular expressions keep their backslashes', () => {
    const p = load("4711: forty seven eleven\nyes: yeah\n'/\\bAG\\b/': A G\n");
    expect(p.text('Order 4711 or 47110, yes, Siemens AG or AGB.')).toBe('Order forty seven eleven or 47110, yeah, Siemens A G or AGB.');
  });

  it('respellings and ipa are checked against SSML; x-sampa may hold its stress mark', () => {
    const p = load('Nguyen: { ipa: \'"N\\wi@n\', alphabet: x-sampa }\nAmp: { say: "A & B" }\n');
    expect(p.ssml('Nguyen, Amp')).toBe('<phoneme alphabet="x-sampa" ph="&quot;N\\wi@n">Nguyen</phoneme>, <sub alias="A &amp; B">Amp</sub>');
    expect(p.text('Nguyen, Amp')).toBe('Nguyen, A & B');
  });
});

describe('pronunciations: matching', () => {
  it('whole words only, in any script: not inside a longer word', () => {
    const p = load('sipgate: sip gate\nMüller: Mueller\nStraße: Strasse\nß: sharp s\n');
    expect(p.text("sipgate's sipgates mysipgate sipgate-app (sipgate)")).toBe("sip gate's sipgates mysipgate sip gate-app (sip gate)");
    expect(p.text('Müller, Müllerin, Obermüller, MÜLLER')).toBe('Mueller, Müllerin, Obermüller, Mueller');
    expect(p.text('Straße, Hauptstraße, Straßenbahn, straße')).toBe('Strasse, Hauptstraße, Straßenbahn, Strasse');
    expect(p.text('ß groß')).toBe('sharp s groß');
  });

  it('case does not matter, and a respelling keeps nothing of the original casing', () => {
    const p = load('sipgate: sip gate\n');
    expect(p.text('SIPGATE Sipgate sipGate')).toBe('sip gate sip gate sip gate');
  });

  it('a phrase: any spaces between its words, either apostrophe', () => {
    const p = load("New York: Noo York\nMacy's: Macies\n");
    expect(p.text('New  York, new\tyork, NewYork')).toBe('Noo York, Noo York, NewYork');
    expect(p.text("Macy's and Macy’s")).toBe('Macies and Macies');
  });

  it('a word with punctuation at its edge', () => {
    const p = load('Dr.: Doctor\nC++: C plus plus\n');
    expect(p.text('Dr. Who writes C++ code, not Dr code.')).toBe('Doctor Who writes C plus plus code, not Dr code.');
  });

  it('the longest wins where two overlap, wherever each starts', () => {
    const p = load('Müller: Mueller\nMüller-Lüdenscheidt: ML\nLüdenscheidt: Luedenscheid\nNew York: NY\nYork City Hall: the hall\n');
    expect(p.text('Müller-Lüdenscheidt, Müller, Lüdenscheidt')).toBe('ML, Mueller, Luedenscheid');
    expect(p.text('New York City Hall, New York')).toBe('New the hall, NY');
  });

  it('the longest wins against a regular expression too, whichever is written first', () => {
    const p = load('/\\bAB\\w*/: regex\nABC Corp: the corp\n');
    expect(p.text('ABC Corp, ABCDEFGHIJ Corp, AB')).toBe('the corp, regex Corp, regex');
  });

  it('regular expressions: case-sensitive unless /…/i, their own groups and back-references', () => {
    const p = load("/\\bGmbH\\b/: G m b H\n/\\bag\\b/i: A G\n'/(?<l>[a-z])\\k<l>x/': double\n'/(\\d)-\\1/': same\nplain: word\n");
    expect(p.text('Foo GmbH, foo GMBH, Bar AG, bar ag')).toBe('Foo G m b H, foo GMBH, Bar A G, bar A G');
    expect(p.text('aax abx 7-7 7-8 plain')).toBe('double abx same 7-8 word');
  });

  it('applied once: a respelling is never looked at again', () => {
    const p = load('sipgate: sip gate\nsip: sipgate\ngate: door\n');
    expect(p.text('sipgate, sip, gate')).toBe('sip gate, sipgate, door');
  });

  it('text() leaves an entry with only ipa alone; ssml() gives it a phoneme', () => {
    const p = load('Nguyen: { ipa: ŋwiən }\n');
    expect(p.size).toBe(1);
    expect(p.text('Mr Nguyen')).toBe('Mr Nguyen');
    expect(p.ssml('Mr Nguyen')).toBe('Mr <phoneme alphabet="ipa" ph="ŋwiən">Nguyen</phoneme>');
  });
});

describe('pronunciations: SSML', () => {
  const p = load(EXAMPLE);

  it('a respelling becomes a sub, ipa a phoneme; the word as written stays inside', () => {
    expect(p.ssml('Call sipgate, Nguyen or Müller-Lüdenscheidt GmbH.')).toBe(
      'Call <sub alias="sip gate">sipgate</sub>, <phoneme alphabet="ipa" ph="ŋwiən">Nguyen</phoneme> or ' +
        '<sub alias="Müller Lüdenscheid">Müller-Lüdenscheidt</sub> <sub alias="G m b H">GmbH</sub>.',
    );
  });

  it('never touches a tag, its attributes, or what a sub, phoneme or say-as already says', () => {
    const piece =
      'sipgate <break time="1s"/> <sub alias="x">sipgate</sub> <prosody rate="slow">Nguyen</prosody> ' +
      '<mark name="sipgate"/> <say-as interpret-as="characters">GmbH</say-as> <phoneme alphabet="ipa" ph="n">Nguyen</phoneme> sipgate';
    expect(p.ssml(piece)).toBe(
      '<sub alias="sip gate">sipgate</sub> <break time="1s"/> <sub alias="x">sipgate</sub> ' +
        '<prosody rate="slow"><phoneme alphabet="ipa" ph="ŋwiən">Nguyen</phoneme></prosody> <mark name="sipgate"/> ' +
        '<say-as interpret-as="characters">GmbH</say-as> <phoneme alphabet="ipa" ph="n">Nguyen</phoneme> <sub alias="sip gate">sipgate</sub>',
    );
  });

  it('text that only looks like markup is text', () => {
    expect(p.ssml('3 < 5 & sipgate > 2')).toBe('3 < 5 & <sub alias="sip gate">sipgate</sub> > 2');
  });

  it('what ssml() gives makes a well-formed document that keeps its tags', () => {
    const amp = load('Ben & Jerry: { say: "Ben \\"n\\" Jerry" }\nNguyen: { say: Nwin, ipa: "ŋwiən" }\nsipgate: sip gate\n');
    const pieces = [
      amp.ssml('Ben & Jerry <break time="300ms"/> sell Nguyen < 5 euros.'),
      amp.ssml('<sub alias="x">sipgate</sub> and <prosody rate="slow">sipgate'),
    ];
    const document = ssmlDocument(pieces);
    expect(document).toBe(
      '<speak><sub alias="Ben &quot;n&quot; Jerry">Ben &amp; Jerry</sub> <break time="300ms"/> sell ' +
        '<phoneme alphabet="ipa" ph="ŋwiən">Nguyen</phoneme> &lt; 5 euros. <sub alias="x">sipgate</sub> and ' +
        '<prosody rate="slow"><sub alias="sip gate">sipgate</sub></prosody></speak>',
    );
    expect(wellFormed(document)).toBe(true);
    // The check itself tells a broken document.
    for (const broken of ['<speak>a & b</speak>', '<speak><sub alias="x">a</speak>', '<speak><sub alias="a"b">a</sub></speak>', '<speak>a < b</speak>']) {
      expect(wellFormed(broken)).toBe(false);
    }
    expect(stripSsml(document)).toBe('Ben "n" Jerry sell Nguyen < 5 euros. x and sip gate');
    const all = ssmlDocument([p.ssml('Call sipgate, Nguyen or Müller-Lüdenscheidt GmbH.')]);
    expect(wellFormed(all)).toBe(true);
    expect(all.match(/<(?:sub|phoneme) /gu)).toHaveLength(4);
  });
});

describe('pronunciations: a language folder over the default folder', () => {
  it('adds its entries and overrides the same words, whatever their case', () => {
    const base = load('sipgate: sip gate\nNguyen: Nwin\n/\\bGmbH\\b/: G m b H\n');
    const own = load('Sipgate: sipp gahte\nStraße: Schtrasse\n/\\bGmbH\\b/: Ge em be ha\n');
    const layered = layerPronunciations(base, own);
    expect(layered.size).toBe(4);
    expect(layered.text('sipgate Nguyen Straße GmbH')).toBe('sipp gahte Nwin Schtrasse Ge em be ha');
    expect(base.text('sipgate Straße')).toBe('sip gate Straße');
  });

  it('an empty side costs nothing', () => {
    const base = load('sipgate: sip gate\n');
    expect(layerPronunciations(base, NO_PRONUNCIATIONS)).toBe(base);
    expect(layerPronunciations(NO_PRONUNCIATIONS, base)).toBe(base);
    expect(layerPronunciations(NO_PRONUNCIATIONS, NO_PRONUNCIATIONS).size).toBe(0);
  });
});

describe('readPronunciations', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hotline-pronunciations-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('no file: nothing applied, nothing wrong', async () => {
    expect(await readPronunciations(dir)).toEqual({ pronouncer: NO_PRONUNCIATIONS, problems: [], text: undefined });
    expect(await readPronunciations(path.join(dir, 'gone'))).toEqual({ pronouncer: NO_PRONUNCIATIONS, problems: [], text: undefined });
  });

  it('the file: its entries, its problems, its text', async () => {
    const text = '\uFEFFsipgate: sip gate\nbroken: { sai: x }\n';
    await writeFile(path.join(dir, FILE), text);
    const read = await readPronunciations(dir);
    expect(read.text).toBe(text.slice(1));
    expect(read.pronouncer.text('sipgate')).toBe('sip gate');
    expect(read.problems).toEqual([
      { file: FILE, severity: 'warning', message: 'line 2: "broken": unknown field "sai" is ignored (known: say, ipa, alphabet)' },
      { file: FILE, severity: 'error', message: 'line 2: "broken" has neither say nor ipa' },
    ]);
    const german = await readPronunciations(dir, 'de/pronunciations.yaml');
    expect(german.problems.map((p) => p.file)).toEqual(['de/pronunciations.yaml', 'de/pronunciations.yaml']);
  });

  it('a file that cannot be read is an error', async () => {
    await mkdir(path.join(dir, FILE));
    const read = await readPronunciations(dir);
    expect(read.pronouncer).toBe(NO_PRONUNCIATIONS);
    expect(read.problems).toHaveLength(1);
    expect(read.problems[0]!.message).toMatch(/^cannot be read: /u);
  });

  it('the shipped file: no problems, and Hotline keeps its own name', async () => {
    const read = await readPronunciations(path.resolve('prompts'));
    expect(read.problems).toEqual([]);
    expect(read.pronouncer.size).toBeGreaterThanOrEqual(2);
    // Potsdam has only its sounds: plain text keeps it, SSML gives the voice the phonemes.
    expect(read.pronouncer.text('Hotline here. We deliver to Potsdam; the shop is at 12 Market St.')).toBe(
      'Hotline here. We deliver to Potsdam; the shop is at 12 Market Street.',
    );
    expect(read.pronouncer.ssml('We deliver to Potsdam.')).toBe('We deliver to <phoneme alphabet="ipa" ph="ˈpɔtsdam">Potsdam</phoneme>.');
    expect(wellFormed(ssmlDocument([read.pronouncer.ssml('Hotline delivers to Potsdam, and sells descaler.')]))).toBe(true);
  });
});
