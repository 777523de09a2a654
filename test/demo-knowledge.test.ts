/**
 * The demo model and the note of the business's documents Hotline adds to
 * the caller's newest message: it reads passage (1) aloud, declines to guess
 * a question nothing matched, and its rules on the caller's words never
 * match a passage of the note.
 */
import { describe, expect, test } from 'vitest';
import { FOUND_MARK, NOTHING_MARK, splitKnowledgeNote } from '../src/call/knowledge-note.js';
import { UNKNOWN_ANSWER, firstPassage, looksLikeQuestion } from '../src/demo/demo-knowledge.js';
import { demoScript } from '../src/demo/demo-script.js';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';

// The two notes as Hotline writes them.
const FOUND = FOUND_MARK;
const NOTHING = NOTHING_MARK;

function found(said: string, ...passages: string[]): string {
  return `${said}\n\n${FOUND}\n${passages.map((passage, i) => `(${i + 1}) ${passage}`).join('\n')}`;
}

function nothing(said: string): string {
  return `${said}\n\n${NOTHING}`;
}

/** A request whose newest caller message is `content`, after a greeting and an earlier turn. */
function asking(content: string): ChatRequestBody {
  return {
    model: 'hotline-demo',
    messages: [
      { role: 'system', content: 'You are the phone assistant of a small business.' },
      { role: 'assistant', content: 'Hello, thanks for calling! How can I help you today?' },
      { role: 'user', content },
    ],
  };
}

const DELIVERY_AREAS =
  'delivery.md › Delivery areas: We deliver within Berlin and to Potsdam. We charge $5.90 per delivery, and it is free for orders above $100. ' +
  'We call you the day before.';
const ABROAD = 'faq.yaml › Do you ship abroad?: Do you ship abroad? No, we only deliver within Berlin and to Potsdam. Collecting from the shop is free.';
const OPENED_DE =
  'de/ruecksendung.md › Benutzte Geräte und Verbrauchsartikel: Eine geöffnete oder benutzte Kaffeemaschine oder Kaffeemühle können Sie innerhalb von ' +
  '30 Tagen zurückschicken, wenn sie vollständig und unbeschädigt ist. Angebrochene Verbrauchsartikel wie Kaffeebohnen nehmen wir nicht zurück. ' +
  'Bitte legen Sie den Kassenbon bei.';
const HOLIDAYS = 'opening-hours.md › Holidays: We are closed on Sundays and on public holidays. Over Christmas we are closed from 24 to 26 December.';

describe('passages found', () => {
  test('the reply is passage (1) after its heading, cut to two sentences; the other passages are not read', () => {
    expect(demoScript(asking(found('Do you deliver to Potsdam?', DELIVERY_AREAS, ABROAD)))).toEqual({
      content: 'We deliver within Berlin and to Potsdam. We charge $5.90 per delivery, and it is free for orders above $100.',
    });
  });

  test('an FAQ passage is answered without its question, even when the question holds a colon', () => {
    expect(demoScript(asking(found('Can you send it to Vienna?', ABROAD, DELIVERY_AREAS))).content).toBe(
      'No, we only deliver within Berlin and to Potsdam. Collecting from the shop is free.',
    );
    const colon = 'faq.yaml › Returns: can I return it opened?: Returns: can I return it opened? Yes, within 30 days. Bring the receipt. Thanks.';
    expect(firstPassage(`${FOUND}\n(1) ${colon}`)).toBe('Yes, within 30 days. Bring the receipt. Thanks.');
  });

  test('German passages are read as they are, German abbreviations and dates kept whole', () => {
    const said = 'Kann ich eine geöffnete Kaffeemühle nach drei Wochen noch zurückschicken?';
    expect(demoScript(asking(found(said, OPENED_DE))).content).toBe(
      'Eine geöffnete oder benutzte Kaffeemaschine oder Kaffeemühle können Sie innerhalb von 30 Tagen zurückschicken, wenn sie vollständig und ' +
        'unbeschädigt ist. Angebrochene Verbrauchsartikel wie Kaffeebohnen nehmen wir nicht zurück.',
    );
    const dates = 'de/oeffnungszeiten.md › Feiertage: Vom 24. bis 26. Dezember ist der Laden zu, z. B. auch am 24. Dezember. An Silvester bis 14 Uhr. Sonst nicht.';
    expect(demoScript(asking(found('Haben Sie an Heiligabend auf?', dates))).content).toBe(
      'Vom 24. bis 26. Dezember ist der Laden zu, z. B. auch am 24. Dezember. An Silvester bis 14 Uhr.',
    );
  });

  test('a passage with no heading, and a note over several lines, are read too', () => {
    expect(firstPassage(`${FOUND}\n(1) notes.txt: We close early on Fridays. Really.\n(2) other.md › X: no`)).toBe('We close early on Fridays. Really.');
    expect(firstPassage(`${FOUND}\n(1) returns.md › Refunds: We refund\nwithin 5 business days.\n(2) faq.yaml › Y: Y no`)).toBe(
      'We refund within 5 business days.',
    );
    // A note whose passages cannot be read leaves the echo.
    expect(demoScript(asking(`Tell us something\n\n${FOUND}`)).content).toMatch(/^I'm the built-in demo model.*You said: "tell us something"\./);
  });
});

describe('nothing matches', () => {
  test('a question, English or German, is answered with "I don\'t know", not a guess', () => {
    for (const said of [
      'Do you have loyalty cards?',
      'Hi, do you sell beans from Bonanza Roasters',
      'which roasters do you work with',
      'Gibt es bei Ihnen eine Kundenkarte?',
      'Hallo, könnt ihr auch Siebträger verleihen',
      'Liefert ihr auch nach Hamburg',
      "I'd like to know whether you buy used machines.",
      'ich wollte fragen, ob Sie gebrauchte Maschinen ankaufen',
    ]) {
      expect(demoScript(asking(nothing(said))), said).toEqual({ content: UNKNOWN_ANSWER });
    }
  });

  test('words that ask nothing get the echo, without the note', () => {
    const reply = demoScript(asking(nothing('My name is Max Bauer.')));
    expect(reply.content).toMatch(/^I'm the built-in demo model, so my answers are scripted\. You said: "my name is max bauer"\./);
    expect(reply.content).not.toContain("business's documents");
    expect(looksLikeQuestion('Ich habe eine Kaffeemühle gekauft.')).toBe(false);
    expect(looksLikeQuestion('Have a nice day')).toBe(false);
  });
});

describe('the rules on the caller\'s words', () => {
  test('an opening-hours question with a note still gets the hours reply, not the passage', () => {
    const reply = demoScript(asking(found('What are your opening hours at Christmas?', HOLIDAYS)));
    expect(reply.content).toMatch(/^We're open Monday to Friday from 9 a\.m\. to 6 p\.m\./);
    expect(demoScript(asking(nothing('When are you open on Sundays?'))).content).toMatch(/^We're open Monday to Friday/);
  });

  test('a passage saying "open", "order", "person" or "bye" does not set off a rule', () => {
    const wordy =
      'faq.yaml › Can I collect my order?: Can I collect my order? Yes, we are open until 6 p.m. and a person hands it over. Bye for now, price list on request.';
    expect(demoScript(asking(found('Can I pick it up myself?', wordy))).content).toBe(
      'Yes, we are open until 6 p.m. and a person hands it over. Bye for now, price list on request.',
    );
    // The order rule, too, looks at the caller's words of the turn before.
    const request = asking('4711');
    request.messages.splice(2, 0, { role: 'user', content: found('Can I pick it up?', wordy) }, { role: 'assistant', content: 'Yes, we are open until 6 p.m.' });
    expect(demoScript({ ...request, tools: [{ type: 'function', function: { name: 'order_status' } }] }).toolCalls).toBeUndefined();
  });

  test('the note is split off at its marker: the last one, where Hotline appends it', () => {
    expect(splitKnowledgeNote(nothing('Hello there'))).toEqual({ said: 'Hello there', note: NOTHING });
    expect(splitKnowledgeNote('Hello there')).toEqual({ said: 'Hello there', note: undefined });
    const tricky = `I read "${FOUND_MARK}" somewhere\n\n${NOTHING}`;
    expect(splitKnowledgeNote(tricky).note).toBe(NOTHING);
  });
});
