/**
 * The demo model speaks the call's language: given the system prompt of a shipped language folder
 * (prompts/de/, prompts/tr/, prompts/ar/), it answers in that language and understands the
 * caller's words in it — opening hours, prices, the address, a person, goodbye, order 4711, a
 * callback, a question the documents do not answer, and anything else said back. With the English
 * system prompt (or none) it says exactly what it always said.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { NOTHING_MARK } from '../src/call/knowledge-note.js';
import { UNKNOWN_ANSWER } from '../src/demo/demo-knowledge.js';
import { demoLanguage, phrasesFor, type DemoLanguage } from '../src/demo/demo-languages.js';
import { demoScript } from '../src/demo/demo-script.js';
import { detectLanguage } from '../src/language/detect.js';
import type { ChatMessage, ChatRequestBody } from '../src/llm/scripted-server.js';
import { repoRoot } from './helpers/child-process.js';

const systems: Record<DemoLanguage, string> = { en: '', de: '', tr: '', ar: '' };

beforeAll(async () => {
  for (const language of ['en', 'de', 'tr', 'ar'] as const) {
    const file = path.join(repoRoot, 'prompts', language === 'en' ? '' : language, 'system.md');
    // The model is sent the prompt's text, not its front matter.
    systems[language] = (await readFile(file, 'utf8')).replace(/^---\n[\s\S]*?\n---\n/, '');
  }
  // Telling Latin-script languages apart needs the detector's data, which loads in the background on first use.
  await vi.waitFor(() => expect(detectLanguage('This sentence is plainly written in English.', ['en', 'de'])).toBeDefined(), { timeout: 30_000, interval: 20 });
});

const TOOLS = [
  { type: 'function' as const, function: { name: 'order_status' } },
  { type: 'function' as const, function: { name: 'book_callback' } },
];

/** A request in `language` whose caller said `said` last, after the messages given. */
function asking(language: DemoLanguage, said: string, before: ChatMessage[] = []): ChatRequestBody {
  return {
    model: 'hotline-demo',
    messages: [{ role: 'system', content: systems[language] }, { role: 'assistant', content: '…' }, ...before, { role: 'user', content: said }],
    tools: TOOLS,
  };
}

/** The request after the model called `tool` and it answered `result`. */
function answered(language: DemoLanguage, tool: string, args: object, result: string): ChatRequestBody {
  const call = { id: 'call_1', type: 'function' as const, function: { name: tool, arguments: JSON.stringify(args) } };
  return {
    model: 'hotline-demo',
    messages: [
      { role: 'system', content: systems[language] },
      { role: 'user', content: '4711' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: result },
    ],
  };
}

const ORDER = JSON.stringify({ number: '4711', status: 'shipped', items: 2, carrier: 'Parcel Express', expected_delivery: 'tomorrow' });
const CALLBACK = JSON.stringify({ id: 'CB-1001', status: 'booked', when: 'within the next hour' });

interface Case {
  hours: string;
  prices: string;
  address: string;
  person: string;
  bye: string;
  order: string;
  callback: string;
  unknown: string;
  other: string;
  /** What the demo says, in part. */
  expect: { hours: RegExp; order: RegExp; shipped: string; booked: string; echo: RegExp };
}

const CASES: Record<'de' | 'tr' | 'ar', Case> = {
  de: {
    hours: 'Guten Tag, wann haben Sie geöffnet?',
    prices: 'Was kostet ein Termin bei Ihnen?',
    address: 'Wo finde ich Sie denn?',
    person: 'Kann ich bitte mit einem Mitarbeiter sprechen?',
    bye: 'Danke, das war alles. Tschüss!',
    order: 'Ich wollte nach meiner Bestellung fragen.',
    callback: 'Können Sie mich später zurückrufen?',
    unknown: 'Haben Sie eine Kundenkarte?',
    other: 'Mein Name ist Petra Schulz.',
    expect: {
      hours: /^Wir haben Montag bis Freitag von 9 bis 18 Uhr geöffnet\./,
      order: /Wie lautet Ihre Bestellnummer\?/,
      shipped: 'Ihre Bestellung 4711 wurde mit Parcel Express verschickt und sollte morgen ankommen.',
      booked: 'Erledigt: Eine Kollegin oder ein Kollege ruft Sie innerhalb der nächsten Stunde zurück. Ihre Referenz ist CB-1001.',
      echo: /^Ich bin das eingebaute Demo-Modell.*Sie sagten: „mein name ist petra schulz"\./,
    },
  },
  tr: {
    hours: 'Merhaba, çalışma saatleriniz nedir?',
    prices: 'Bir randevunun fiyatı ne kadar?',
    address: 'Adresiniz neresi?',
    person: 'Bir temsilciyle görüşebilir miyim?',
    bye: 'Teşekkürler, hoşça kalın!',
    order: 'Siparişimin durumunu öğrenmek istiyorum.',
    callback: 'Beni daha sonra geri arayabilir misiniz?',
    unknown: 'Sadakat kartınız var mı?',
    other: 'Benim adım Ayşe Yılmaz.',
    expect: {
      hours: /^Pazartesiden cumaya saat 9 ile 18 arasında açığız\./,
      order: /Sipariş numaranız nedir\?/,
      shipped: '4711 numaralı siparişiniz Parcel Express ile kargoya verildi ve yarın elinizde olmalı.',
      booked: 'Tamamdır: bir çalışma arkadaşım sizi bir saat içinde geri arayacak. Referans numaranız CB-1001.',
      echo: /^Ben yerleşik demo modeliyim.*Şunu söylediniz: "benim adım ayşe yılmaz"\./,
    },
  },
  ar: {
    hours: 'مرحبًا، ما هي مواعيد العمل لديكم؟',
    prices: 'كم سعر الموعد؟',
    address: 'ما هو عنوانكم؟',
    person: 'أريد التحدث مع موظف من فضلك',
    bye: 'شكرًا، مع السلامة',
    order: 'أريد أن أسأل عن طلبي',
    callback: 'هل يمكنكم الاتصال بي لاحقًا؟',
    unknown: 'هل لديكم بطاقة ولاء؟',
    other: 'اسمي أحمد الخطيب',
    expect: {
      hours: /^نعمل من الاثنين إلى الجمعة/,
      order: /ما رقم طلبك؟/,
      shipped: 'تم شحن طلبك 4711 مع Parcel Express، ومن المتوقع أن يصل غدًا.',
      booked: 'تم: سيتصل بك أحد زملائي خلال الساعة القادمة. رقمك المرجعي هو CB-1001.',
      echo: /^أنا نموذج العرض المدمج.*لقد قلت: «اسمي أحمد الخطيب»/,
    },
  },
};

describe.each(Object.entries(CASES) as ['de' | 'tr' | 'ar', Case][])('a system prompt in %s', (language, c) => {
  const phrases = phrasesFor(language);

  test('is told from the prompt itself', () => {
    expect(demoLanguage(asking(language, c.other))).toBe(language);
  });

  test('opening hours, prices and the address, in that language', () => {
    expect(demoScript(asking(language, c.hours)).content).toMatch(c.expect.hours);
    expect(demoScript(asking(language, c.prices))).toEqual({ content: phrases.pricesAnswer });
    expect(demoScript(asking(language, c.address))).toEqual({
      toolCalls: [{ name: 'speak', arguments: JSON.stringify({ text: phrases.addressAnswer }) }],
    });
  });

  test('a person: a transfer; goodbye: a hangup', () => {
    expect(demoScript(asking(language, c.person))).toEqual({ content: phrases.transfer, toolCalls: [{ name: 'transfer', arguments: '{}' }] });
    expect(demoScript(asking(language, c.bye))).toEqual({ content: phrases.goodbye, toolCalls: [{ name: 'hangup', arguments: '{}' }] });
  });

  test('order 4711: the number asked for, looked up, and the result said', () => {
    const question = demoScript(asking(language, c.order));
    expect(question.content).toMatch(c.expect.order);
    // The bare number after the question answers it.
    const lookup = demoScript(asking(language, '4711', [{ role: 'user', content: c.order }, { role: 'assistant', content: question.content! }]));
    expect(lookup.toolCalls).toEqual([{ name: 'order_status', arguments: '{"order_number":"4711"}' }]);
    expect(demoScript(answered(language, 'order_status', { order_number: '4711' }, ORDER))).toEqual({ content: c.expect.shipped });
    expect(demoScript(answered(language, 'order_status', { order_number: '999' }, 'error: HTTP 404 no order with that number')).content).toBe(
      phrases.orderNotFound('999'),
    );
  });

  test('a callback: booked, and the booking said', () => {
    expect(demoScript(asking(language, c.callback)).toolCalls?.[0]?.name).toBe('book_callback');
    expect(demoScript(answered(language, 'book_callback', { topic: c.callback }, CALLBACK))).toEqual({ content: c.expect.booked });
  });

  test("a question the documents do not answer: it does not know; anything else is said back", () => {
    expect(demoScript(asking(language, `${c.unknown}\n\n${NOTHING_MARK}`))).toEqual({ content: phrases.unknown });
    expect(phrases.unknown).not.toBe(UNKNOWN_ANSWER);
    expect(demoScript(asking(language, c.other)).content).toMatch(c.expect.echo);
  });
});

describe('an English system prompt, or none', () => {
  test('the demo model as it always was', () => {
    for (const system of [systems.en, 'You are a test assistant.', '']) {
      const request = (said: string): ChatRequestBody => ({
        model: 'hotline-demo',
        messages: [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: said }],
        tools: TOOLS,
      });
      expect(demoLanguage(request('Hello'))).toBe('en');
      expect(demoScript(request('What are your opening hours?')).content).toBe(
        "We're open Monday to Friday from 9 a.m. to 6 p.m. On Saturdays, we're open from 10 a.m. to 2 p.m. Is there anything else I can help you with?",
      );
      expect(demoScript(request('Can I talk to a person?'))).toEqual({
        content: "Of course. One moment, I'll connect you with a colleague.",
        toolCalls: [{ name: 'transfer', arguments: '{}' }],
      });
      // German words it always understood, answered in English as ever.
      expect(demoScript(request('Tschüss')).content).toBe('Thanks for calling, and have a lovely day. Goodbye!');
      expect(demoScript(request('Where is my order?')).content).toBe(
        "Sure, I can check that for you. What's your order number? You can also type it on the keypad, then the hash key.",
      );
      expect(demoScript(request(`Do you have loyalty cards?\n\n${NOTHING_MARK}`))).toEqual({ content: UNKNOWN_ANSWER });
      expect(demoScript(request('Hello there')).content).toBe(
        'I\'m the built-in demo model, so my answers are scripted. You said: "hello there". ' +
          'Ask about opening hours, prices, our address or order 4711, ask for a person, or say goodbye.',
      );
    }
  });

  test('a German caller on English prompts is answered in English: the call, not the caller, chooses the prompts', () => {
    expect(demoScript(asking('en', 'Wann haben Sie geöffnet?')).content).toMatch(/^I'm the built-in demo model/);
  });
});
