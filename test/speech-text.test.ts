import { describe, expect, it } from 'vitest';
import { toSpeech } from '../src/call/speech/speech-text.js';

const CASES: ReadonlyArray<readonly [string, string, string]> = [
  // [what, chunk, speech]
  ['bold with **', 'This is **really** important.', 'This is really important.'],
  ['bold with __', 'This is __really__ important.', 'This is really important.'],
  ['italic with *', 'This is *quite* nice.', 'This is quite nice.'],
  ['italic with _', 'This is _quite_ nice.', 'This is quite nice.'],
  ['bold italic', '***Note:*** call us.', 'Note: call us.'],
  ['emphasis around punctuation', '**Done.**', 'Done.'],
  ['emphasis split across chunks', '**Ihr Termin ist bestätigt.', 'Ihr Termin ist bestätigt.'],
  ['strikethrough', 'It was ~~free~~ cheap.', 'It was free cheap.'],
  ['inline code', 'Type `npm start` to run it.', 'Type npm start to run it.'],
  ['code fence line', '```typescript', ''],
  ['heading', '## Opening hours', 'Opening hours'],
  ['heading with closing hashes', '### Prices ###', 'Prices'],
  ['blockquote', '> As the saying goes, better late than never.', 'As the saying goes, better late than never.'],
  ['dash bullet', '- Standard delivery', 'Standard delivery'],
  ['star bullet', '* Express delivery', 'Express delivery'],
  ['plus bullet', '+ Pickup', 'Pickup'],
  ['dot bullet', '• Abholung im Laden', 'Abholung im Laden'],
  ['bullet with bold label', '- **Price:** 29 euros', 'Price: 29 euros'],
  ['quoted bullet', '> - ## Deep', 'Deep'],
  ['numbered item keeps its number', '1. Goals and aspirations', '1. Goals and aspirations'],
  ['link', 'See [our website](https://example.com/help) for more.', 'See our website for more.'],
  ['link with title', 'See [the FAQ](https://example.com/faq "FAQ") please.', 'See the FAQ please.'],
  ['image', '![A happy dog](https://example.com/dog.png) Look at this.', 'A happy dog Look at this.'],
  ['autolink', 'Go to <https://example.com> now.', 'Go to https://example.com now.'],
  ['horizontal rule ---', '---', ''],
  ['horizontal rule ***', '***', ''],
  ['horizontal rule spaced', '- - -', ''],
  ['table row', '| Mon | 9:00 | 17:00 |', 'Mon 9:00 17:00'],
  ['table separator', '|---|:---:|---|', ''],
  ['html tags', 'This is <b>bold</b> and <i>italic</i>.', 'This is bold and italic.'],
  ['html line break', 'First line<br>second line', 'First line second line'],
  ['emoji', 'Great news 🎉 your order shipped!', 'Great news your order shipped!'],
  ['emoji before punctuation', 'Thanks 😊!', 'Thanks!'],
  ['emoji at the start', '👋 Hello there.', 'Hello there.'],
  ['emoji between words', 'I ❤️ pizza.', 'I pizza.'],
  ['emoji glued to words', 'Great👍Thanks', 'Great Thanks'],
  ['ZWJ family', 'Family 👨‍👩‍👧‍👦 tickets are cheaper.', 'Family tickets are cheaper.'],
  ['skin tone', 'Well done 👍🏽.', 'Well done.'],
  ['flag', 'We ship to Germany 🇩🇪 and Austria 🇦🇹.', 'We ship to Germany and Austria.'],
  ['keycap keeps the digit', 'Press 1️⃣ for sales.', 'Press 1 for sales.'],
  ['only emoji', '🎉🎉🎉', ''],
  ['only punctuation', '…!?', ''],
  ['only symbols', '** -- **', ''],
  ['whitespace', '  Hello \t  there  ', 'Hello there'],
  ['empty', '', ''],
];

/** SSML as the model may write it, and the plain text it becomes when SSML is off. */
const SSML: readonly (readonly [string, string])[] = [
  ['My email is <spell>foo.bar@example.com</spell>.', 'My email is foo.bar@example.com.'],
  ['One moment <break time="500ms"/> please.', 'One moment please.'],
  ['Call <say-as interpret-as="telephone">+49 30 1234567</say-as> today.', 'Call +49 30 1234567 today.'],
  ['This is <emphasis level="strong">very</emphasis> important.', 'This is very important.'],
  ['<prosody rate="slow">Slowly now.</prosody>', 'Slowly now.'],
  ['The <sub alias="World Wide Web Consortium">W3C</sub> says so.', 'The World Wide Web Consortium says so.'],
  ['Say <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme>.', 'Say tomato.'],
  ['<speak>Hello <mstts:express-as style="cheerful">there</mstts:express-as>!</speak>', 'Hello there!'],
];

const UNCHANGED: readonly string[] = [
  'Hello, how can I help you today?',
  'Your total is $29.95 (incl. 19% VAT) & shipping.',
  'Das kostet 1.234,56 € – passt Ihnen das?',
  'Call +49 30 1234567 or write to first.last@example.com.',
  'f(x) = x * 2.54 + 42.',
  'Use the snake_case name my_var_name here.',
  'Multiply 2*3 or 2 ** 8 if you like.',
  "It's 10:30 a.m., isn't it?",
  'Visit https://example.com/a_b/c?x=1&y=2 for details.',
  'R&D costs rose 5% this year.',
  'C++ and C# are languages.',
  '"Ready." stayed visible.',
  'Mr. Smith said: "No, thanks!"',
  'Is 3 < 5 and 7 > 2? Yes.',
  'Wait... really?!',
];

describe('toSpeech', () => {
  it.each(CASES)('%s', (_what, chunk, speech) => {
    expect(toSpeech(chunk)).toBe(speech);
  });

  it.each(SSML)('bound for ssml, keeps the SSML tags: %s', (chunk) => {
    expect(toSpeech(chunk, true)).toBe(chunk);
  });

  it.each(SSML)('bound for text, never a raw tag: %s', (chunk, plain) => {
    expect(toSpeech(chunk)).toBe(plain);
  });

  it.each(UNCHANGED)('passes ordinary text through unchanged: %s', (chunk) => {
    expect(toSpeech(chunk)).toBe(chunk);
  });
});
