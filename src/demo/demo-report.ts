/**
 * The demo model's answer to a call report request (`response_format` with
 * the `call_report` schema): a JSON object that fits the schema it was sent,
 * so the reports of demo calls show their shape without a real model.
 */
import { z } from 'zod';
import { REPORT_SCHEMA_NAME } from '../reports/report-fields.js';
import type { ChatRequestBody, ScriptedReply } from '../llm/scripted-server.js';

const Property = z.looseObject({ type: z.unknown().optional(), enum: z.array(z.unknown()).optional() });

const ReportFormat = z.looseObject({
  type: z.literal('json_schema'),
  json_schema: z.looseObject({
    // Other requests with a response format (the voicemail judge's) are no reports.
    name: z.literal(REPORT_SCHEMA_NAME),
    schema: z.looseObject({ properties: z.record(z.string(), Property).optional() }).optional(),
  }),
});

/** The report answer, or undefined when the request is no report request. */
export function demoReportReply(request: ChatRequestBody): ScriptedReply | undefined {
  const format = ReportFormat.safeParse(request.response_format);
  if (!format.success) return undefined;
  const answer: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(format.data.json_schema.schema?.properties ?? {})) answer[name] = placeholder(property);
  const lines = callerLines(request);
  answer.summary = `The demo model read ${lines} caller line${lines === 1 ? '' : 's'} and wrote no real summary.`;
  return { content: JSON.stringify(answer) };
}

/** The plainest value of the property's type: false, "", 0, or the first allowed value. */
function placeholder(property: z.infer<typeof Property>): unknown {
  if (property.enum && property.enum.length > 0) return property.enum[0];
  switch (property.type) {
    case 'boolean':
      return false;
    case 'number':
    case 'integer':
      return 0;
    default:
      return '';
  }
}

/** How many lines of the transcript (the user message) the caller said. */
function callerLines(request: ChatRequestBody): number {
  let count = 0;
  for (const message of request.messages) {
    if (message.role !== 'user' || typeof message.content !== 'string') continue;
    for (const line of message.content.split('\n')) if (line.startsWith('Caller: ')) count++;
  }
  return count;
}
