import { describe, expect, it } from 'vitest';
import { hasSsml, ssmlDocument, stripSsml } from '../src/call/speech/ssml.js';

describe('SSML', () => {
  it('tells SSML from text that merely has angle brackets', () => {
    expect(hasSsml('One moment <break time="500ms"/> please.')).toBe(true);
    expect(hasSsml('<speak>Hi</speak>')).toBe(true);
    expect(hasSsml('Is 3 < 5 and 7 > 2?')).toBe(false);
    expect(hasSsml('This is <b>bold</b>.')).toBe(false);
  });

  it('a document per speak: one <speak> root, text escaped, attributes kept', () => {
    expect(ssmlDocument(['Ben & Jerry <break time="300ms"/> cost < 5 euros.'])).toBe(
      '<speak>Ben &amp; Jerry <break time="300ms"/> cost &lt; 5 euros.</speak>',
    );
    expect(ssmlDocument(['<speak>Hello.</speak>', 'How are you?'])).toBe('<speak>Hello. How are you?</speak>');
    expect(ssmlDocument(['Fish &amp; chips.'])).toBe('<speak>Fish &amp; chips.</speak>');
  });

  it('tags a sentence leaves open are closed in its own speak; stray closing tags go', () => {
    expect(ssmlDocument(['<prosody rate="slow">Listen carefully.'])).toBe('<speak><prosody rate="slow">Listen carefully.</prosody></speak>');
    expect(ssmlDocument(['Your balance is 42 euros.</prosody>'])).toBe('<speak>Your balance is 42 euros.</speak>');
    expect(ssmlDocument(['<prosody rate="slow"><emphasis>Now</prosody> then.'])).toBe(
      '<speak><prosody rate="slow"><emphasis>Now</emphasis></prosody> then.</speak>',
    );
  });

  it('plain text from SSML: tags gone, a sub speaks its alias, entities decoded', () => {
    expect(stripSsml('<speak>A<break/>B &amp; <sub alias="Doctor">Dr.</sub> Who</speak>')).toBe('A B & Doctor Who');
  });
});
