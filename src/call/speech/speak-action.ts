import type { SpeakStyle } from '../../prompts/prompt-store.js';
import type { SpeakAction } from '../../protocol/actions.js';
import type { SpokenChunk } from './reply.js';
import { NO_PRONUNCIATIONS, type Pronouncer } from '../../prompts/pronunciations.js';
import { ssmlDocument } from './ssml.js';

/**
 * One speak as the service gets it: the sentences as `text`, or as one SSML
 * document when any carries SSML; the voice, barge-in and end-of-turn options
 * of its style; and, when it ends what Hotline has to say, how long the
 * caller's silence may last before the service reports it.
 */
export function speakAction(
  sessionId: string,
  chunks: readonly SpokenChunk[],
  style: SpeakStyle,
  inputTimeoutSeconds: number | undefined,
  pronounce: Pronouncer = NO_PRONUNCIATIONS,
  ssml = false,
): SpeakAction {
  // The business's names said its way (pronunciations.yaml), here where the sentence is whole and
  // about to leave: the history keeps the words as written. With SSML on, every speak is a document,
  // so a name can be given its sounds.
  const said = chunks.some((c) => c.ssml !== undefined) || (ssml && pronounce.size > 0)
    ? { ssml: ssmlDocument(chunks.map((c) => (pronounce.size > 0 ? pronounce.ssml(c.ssml ?? escapeMarkup(c.text)) : (c.ssml ?? c.text)))) }
    : { text: pronounce.size > 0 ? pronounce.text(joined(chunks)) : joined(chunks) };
  return {
    type: 'speak',
    session_id: sessionId,
    ...said,
    ...(style.tts ? { tts: style.tts } : {}),
    ...(style.barge_in ? { barge_in: style.barge_in } : {}),
    ...(style.vad ? { vad: style.vad } : {}),
    ...(inputTimeoutSeconds === undefined ? {} : { user_input_timeout_seconds: inputTimeoutSeconds }),
  };
}

function joined(chunks: readonly SpokenChunk[]): string {
  return chunks.length === 1 ? chunks[0]!.text : chunks.map((c) => c.text).join(' ');
}

/** Plain text put into an SSML document: a `<` in it is a character, not a tag. */
function escapeMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

/** A goodbye or a hand-over: said whole, whatever the caller does. */
export function notInterruptible(style: SpeakStyle): SpeakStyle {
  return { ...style, barge_in: { strategy: 'none' } };
}
