/**
 * The built-in send_sms tool: a text message to the person on the line, made from one of the
 * templates of `<PROMPTS_DIR>/sms/` (sms-templates.ts) with the call's variables and the fields the
 * model gives. The model picks a template and fills its blanks; it never names a number — the call
 * sends the message (ToolRunContext.textCaller) to the number it is with, and counts them.
 */
import type { BusinessTool, TextSent, ToolBox, ToolResult, ToolRunContext } from '../call/ports/business-tools.js';
import { isBuiltinName } from '../prompts/builtins.js';
import { blanksOf, renderSms, SMS_MAX_CHARS, smsTemplateFor, type SmsTemplates } from './sms-templates.js';

export const SEND_SMS = 'send_sms';

/** The longest value of one field, and the most fields, the model may give. */
const FIELD_MAX_CHARS = 200;
const MAX_FIELDS = 20;

/** The tool, offered while the folder has at least one template (the call also needs a number and texts left: CallTools). */
export function smsToolBox(templates: () => SmsTemplates): ToolBox {
  let seen: SmsTemplates | undefined;
  let offer: readonly BusinessTool[] = Object.freeze([]);
  return {
    tools() {
      const now = templates();
      // Asked at every turn: the same templates give the very same offer.
      if (now !== seen) {
        seen = now;
        offer = Object.freeze(now.defaults.size === 0 ? [] : [sendSmsTool(now)]);
      }
      return offer;
    },
  };
}

function sendSmsTool(templates: SmsTemplates): BusinessTool {
  const names = [...templates.defaults.keys()];
  const listed = [...templates.defaults.values()].map((t) => {
    const blanks = blanksOf(t).filter((name) => !isBuiltinName(name));
    return `${t.name}${t.description ? `: ${t.description}` : ''}${blanks.length > 0 ? ` (fields: ${blanks.join(', ')})` : ''}`;
  });
  return {
    name: SEND_SMS,
    definition: {
      type: 'function',
      function: {
        name: SEND_SMS,
        description:
          "Sends the caller a text message (SMS) made from one of the business's templates, to the phone they are on: the number they " +
          'are calling from, or the one this call reached. It cannot go to any other number. Use it when the caller wants something ' +
          "in writing (an address, an order's status), or agrees when you offer it. A template's blanks that the call does not know " +
          'are filled from fields: ask the caller for them first. Tell the caller once it is sent.',
        parameters: {
          type: 'object',
          properties: {
            template: { type: 'string', enum: names, description: `Which message. ${listed.join('; ')}.` },
            fields: {
              type: 'object',
              description: 'Values for the blanks the template names, e.g. {"order_id": "4711"}. What the call knows already (such as the caller\'s number) is filled in by itself.',
              additionalProperties: { type: 'string' },
            },
          },
          required: ['template'],
        },
      },
    },
    // Sending is a change: a caller cutting in while it is sent does not get it twice.
    sideEffect: true,
    holdLines: [],
    textsCaller: true,
    source: 'the text message templates (sms/)',
    async run(argumentsJson, context) {
      return send(templates, names, argumentsJson, context);
    },
  };
}

function send(templates: SmsTemplates, names: readonly string[], argumentsJson: string, context: ToolRunContext): ToolResult {
  const args = argumentsOf(argumentsJson);
  if (!args) return { outcome: 'invalid', content: `Nothing was sent. Give the arguments as {"template": "${names[0]}", "fields": {…}}.` };
  const { name, fields, unused } = args;
  if (name === undefined || !templates.defaults.has(name)) {
    return { outcome: 'invalid', content: `Nothing was sent: there is no template "${name ?? ''}". The templates are ${names.join(', ')}.` };
  }
  if (!context.textCaller) return { outcome: 'unavailable', content: 'Nothing was sent: this call cannot send text messages.' };
  const template = smsTemplateFor(templates, name, context.variables.language)!;
  // The call's own variables win: the model fills blanks, it does not change who the caller is.
  const rendered = renderSms(template, { ...fields, ...known(context.variables) });
  if (!rendered.ok) {
    if ('missing' in rendered) {
      const example = Object.fromEntries(rendered.missing.map((blank) => [blank, '…']));
      return {
        outcome: 'invalid',
        content:
          `Nothing was sent: the template "${name}" needs ${rendered.missing.join(', ')}. Ask the caller if you do not know, ` +
          `then call ${SEND_SMS} again with fields ${JSON.stringify(example)}.`,
      };
    }
    return {
      outcome: 'invalid',
      content: `Nothing was sent: the message would be ${rendered.tooLong} characters, more than the ${SMS_MAX_CHARS} a text message may have. Give shorter fields.`,
    };
  }
  const sent = context.textCaller({ template: name, message: rendered.message });
  if (!sent.sent) return notSent(sent);
  const ignored = unused.length === 0 ? '' : ` (${unused.join(', ')} ${unused.length === 1 ? 'was' : 'were'} not used: a text message goes to the caller's own number only.)`;
  const last = sent.left === 0 ? ' That was the last text message this call may send.' : '';
  return { outcome: 'ok', content: `Sent to the caller's own phone: "${rendered.message}".${ignored}${last}` };
}

function notSent(sent: Extract<TextSent, { sent: false }>): ToolResult {
  switch (sent.reason) {
    case 'no_number':
      return { outcome: 'unavailable', content: "Nothing was sent: the caller's number is not known (it is withheld), so no text message can reach them." };
    case 'limit':
      return {
        outcome: 'unavailable',
        content: `Nothing was sent: this call has sent ${sent.max === 1 ? 'its one text message' : `its ${sent.max} text messages`}, the most one call may send.`,
      };
    case 'empty':
      return { outcome: 'invalid', content: 'Nothing was sent: the message came out empty.' };
    case 'ended':
      return { outcome: 'unavailable', content: 'Nothing was sent: the call has ended.' };
  }
}

/** The template, the fields (strings, whitespace collapsed, cut short) and any other argument given, whose names are said to be unused. */
function argumentsOf(argumentsJson: string): { name: string | undefined; fields: Record<string, string>; unused: string[] } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsJson || '{}');
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { template, fields: rawFields, ...rest } = parsed as Record<string, unknown>;
  const fields: Record<string, string> = {};
  if (typeof rawFields === 'object' && rawFields !== null && !Array.isArray(rawFields)) {
    for (const [key, value] of Object.entries(rawFields).slice(0, MAX_FIELDS)) {
      if (typeof value !== 'string' && typeof value !== 'number') continue;
      fields[key] = String(value).replace(/\s+/g, ' ').trim().slice(0, FIELD_MAX_CHARS);
    }
  }
  return { name: typeof template === 'string' ? template.trim() : undefined, fields, unused: Object.keys(rest).slice(0, 5).map((key) => key.slice(0, 40)) };
}

/** The call's variables that have a value: one without must not hide a field of the same name. */
function known(variables: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(variables)) if (value !== undefined && value.trim() !== '') out[key] = value;
  return out;
}
