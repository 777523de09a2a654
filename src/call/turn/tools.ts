import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';

export const SPEAK = 'speak';
export const TRANSFER = 'transfer';
export const HANGUP = 'hangup';

/** The tools offered to the model. Named transfer targets become an enum so the model picks a real one. */
export function toolDefinitions(transferTargets: readonly string[]): ChatCompletionTool[] {
  const target: Record<string, unknown> = {
    type: 'string',
    description: 'Who to transfer to. Leave out for the default destination.',
  };
  if (transferTargets.length > 0) target.enum = [...transferTargets];
  return [
    {
      type: 'function',
      function: {
        name: SPEAK,
        description: 'Say something to the caller. Plain spoken text, no markdown.',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string', description: 'What to say.' } },
          required: ['text'],
        },
      },
    },
    {
      type: 'function',
      function: {
        name: TRANSFER,
        description:
          'Transfer the call to a human. Say one short sentence first (e.g. "One moment, I\'ll connect you."); the transfer happens after it has played.',
        parameters: { type: 'object', properties: { target }, required: [] },
      },
    },
    {
      type: 'function',
      function: {
        name: HANGUP,
        description: 'End the call. Say goodbye first; the call ends after the goodbye has played.',
        parameters: { type: 'object', properties: {}, required: [] },
      },
    },
  ];
}

const TransferArgsSchema = z.looseObject({ target: z.string().optional().catch(undefined) });

/** Parses transfer arguments leniently: broken JSON means "no target named". */
export function parseTransferTarget(argumentsJson: string): string | undefined {
  try {
    const parsed = TransferArgsSchema.safeParse(JSON.parse(argumentsJson || '{}'));
    return parsed.success ? parsed.data.target?.trim() || undefined : undefined;
  } catch {
    return undefined;
  }
}

const SpeakArgsSchema = z.looseObject({ text: z.string() });

export function parseSpeakText(argumentsJson: string): string | undefined {
  try {
    const parsed = SpeakArgsSchema.safeParse(JSON.parse(argumentsJson));
    return parsed.success ? parsed.data.text : undefined;
  } catch {
    return undefined;
  }
}
