import type { SpeakStyle } from '../../prompts/prompt-store.js';
import type { SpeakAction } from '../../protocol/actions.js';
import type { SpokenChunk } from './reply.js';
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
): SpeakAction {
  const said = chunks.some((c) => c.ssml !== undefined)
    ? { ssml: ssmlDocument(chunks.map((c) => c.ssml ?? c.text)) }
    : { text: chunks.length === 1 ? chunks[0]!.text : chunks.map((c) => c.text).join(' ') };
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

/** A goodbye or a hand-over: said whole, whatever the caller does. */
export function notInterruptible(style: SpeakStyle): SpeakStyle {
  return { ...style, barge_in: { strategy: 'none' } };
}
