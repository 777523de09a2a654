import type { BusinessTool, ToolBox } from '../call/ports/business-tools.js';
import { phoneKey } from '../phone/phone-number.js';

export const DO_NOT_CALL = 'do_not_call';

/**
 * The model's way to honour "never call me again": the person's number joins
 * the stop list, and a campaign's contact ends `refused` (the campaign reads
 * the tool run in the call's summary). The number goes there normalised, as
 * every number it is compared with is. `addToStopList` logs its own failures:
 * the person is then not told the number is on the list.
 */
export function doNotCallToolBox(
  addToStopList: (number: string, reason: string) => Promise<void>,
  options: { defaultCountryCode: string | undefined },
): ToolBox {
  const tool: BusinessTool = {
    name: DO_NOT_CALL,
    definition: {
      type: 'function',
      function: {
        name: DO_NOT_CALL,
        description:
          'The person asked not to be called again. Puts their number on the stop list: no campaign will call it again. ' +
          'Confirm to them that they will not be called again, then say goodbye.',
        parameters: { type: 'object', properties: { reason: { type: 'string', description: 'In a few words, why (optional).' } } },
      },
    },
    sideEffect: true,
    holdLines: [],
    // An inbound caller asking not to be called is not asking anything of a campaign.
    directions: ['outbound'],
    async run(argumentsJson, context) {
      // Offered on outbound calls only: the number called is the person's.
      const number = context.variables.called_number;
      if (!number) return { outcome: 'error', content: 'The number of this call is unknown; it could not be put on the stop list.' };
      try {
        await addToStopList(phoneKey(number, options), reasonOf(argumentsJson));
      } catch {
        // Not on the list: the person must not be told it is, and the campaign does not take the call as refused.
        return {
          outcome: 'error',
          content: 'The number could not be put on the stop list just now. Do not promise that they will not be called again; say their wish will be passed on.',
        };
      }
      return { outcome: 'ok', content: 'Done: this number will not be called again.' };
    },
  };
  const tools = Object.freeze([tool]);
  return { tools: () => tools };
}

function reasonOf(argumentsJson: string): string {
  try {
    const parsed = JSON.parse(argumentsJson) as { reason?: unknown } | null;
    if (typeof parsed?.reason === 'string' && parsed.reason.trim() !== '') return `asked on a call: ${parsed.reason.trim().slice(0, 200)}`;
  } catch {
    // The reason is a courtesy; the number goes on the list regardless.
  }
  return 'asked on a call';
}
