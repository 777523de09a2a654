/**
 * What the scripted LLM answers in the benchmark: realistic phone replies
 * whose every sentence carries the reply's tag, so a `speak` arriving
 * anywhere can be matched to the LLM request (and its token times) behind it.
 * Shared by the in-thread LLM server and the one on its own thread.
 */
import type { ChatRequestBody } from '../src/llm/chat-request.js';
import { tokenize } from '../src/llm/tokenize.js';
import { completingTokenIndices } from './baselines.js';

/**
 * Three to five sentences (45–80 tokens) with the things that make sentence
 * splitting hard: times, prices, an abbreviation, a list. `{t}` is the tag;
 * it sits in every sentence, away from any dot the chunker must judge.
 */
const TEMPLATES: readonly string[] = [
  'Sure, I can help with that, and I have noted it as case {t}. We are open from 9 a.m. to 6 p.m. on weekdays, ' +
    'so case {t} will be handled today. A standard appointment costs $49.50, which I can book under {t} right away. ' +
    'Is there anything else I can do for you about {t}?',
  'Thanks for waiting, I found your order {t} in our system. It left our warehouse yesterday and should arrive ' +
    'within two to three business days, so {t} is on its way. You will get an e-mail with the tracking link for {t} ' +
    'shortly. Would you like the link for {t} by text message as well?',
  'Here are the two options for {t}:\n1. A callback tomorrow morning about {t}.\n2. An email with the details of {t}.\n' +
    'Which one would you like for {t}?',
  'Of course, {t}! Your appointment {t} is moved to Thursday at 3:30 in the afternoon. Dr. Meyer will see you for {t} in ' +
    'room 12, on the second floor. Please bring your insurance card for {t} with you. Shall I confirm {t} by text ' +
    'message?',
];

export const TEMPLATE_COUNT = TEMPLATES.length;

const TAG_PREFIX = 'Zq';
/** Tags look like `Zq1f`: a word no template contains otherwise. */
const TAG_PATTERN = /Zq[0-9a-z]+/;

/** The tag of the id-th reply; the id also picks the template, so the tag alone says which. */
export function tagFor(id: number): string {
  return `${TAG_PREFIX}${id.toString(36)}`;
}

/** The id a tag was made from (tagFor's inverse). */
export function idOf(tag: string): number {
  return parseInt(tag.slice(TAG_PREFIX.length), 36);
}

export function templateOf(tag: string): number {
  return idOf(tag) % TEMPLATES.length;
}

export function tagOf(text: string): string | undefined {
  return TAG_PATTERN.exec(text)?.[0];
}

export function replyText(tag: string): string {
  return (TEMPLATES[templateOf(tag)] ?? '').replaceAll('{t}', tag);
}

/** What the caller says to get the tagged reply. */
export function question(tag: string): string {
  return `Question ${tag}: can you help me with my appointment?`;
}

/** Sentences Hotline speaks per template (tags never change the count). */
export const EXPECTED_SPEAKS: readonly number[] = TEMPLATES.map(
  (_, i) => completingTokenIndices(tokenize(replyText(tagFor(i)))).length,
);

/** Gaps between tokens per template, to spread barge-in moments over the whole stream. */
export const STREAM_GAPS: readonly number[] = TEMPLATES.map((_, i) => tokenize(replyText(tagFor(i + 36 * 36))).length - 1);

/** The tag the request asks for: it is in the caller's last words. */
export function requestedTag(body: ChatRequestBody): string | undefined {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i];
    if (message?.role === 'user' && typeof message.content === 'string') return tagOf(message.content);
  }
  return undefined;
}

export const UNTRACED_REPLY = 'Sorry, could you say that again?';
