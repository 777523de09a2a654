/**
 * A report's structured fields as report.md declares them, turned into the
 * two schemas that must agree: the JSON schema the model is asked to fill
 * (`response_format`) and the zod schema its answer is checked with.
 */
import { z } from 'zod';
import type { FieldValues } from '../store/report-repository.js';

export type ReportFieldType = 'boolean' | 'string' | 'number' | 'integer';

export interface ReportField {
  readonly name: string;
  /** A list: the field is one of these strings (an enum). */
  readonly type: ReportFieldType | readonly string[];
  readonly description: string | undefined;
}

/** The `json_schema.name` of a report request: the demo model tells report requests by it. */
export const REPORT_SCHEMA_NAME = 'call_report';

/** The key of the summary in the model's answer; no field may take it. */
export const SUMMARY_KEY = 'summary' as const;
const SUMMARY_DESCRIPTION = 'The summary of the call, as the instructions ask for it.';

type JsonSchema = { readonly [key: string]: unknown };

function fieldSchema(field: ReportField): JsonSchema {
  const described = field.description === undefined ? {} : { description: field.description };
  if (typeof field.type !== 'string') return { type: 'string', enum: [...field.type], ...described };
  return { type: field.type, ...described };
}

/**
 * The schema for `response_format: { type: 'json_schema', json_schema: { name: 'call_report', strict: true, schema } }`.
 * Strict mode wants every property required and no others allowed.
 */
export function reportJsonSchema(fields: readonly ReportField[]): JsonSchema {
  const properties: Record<string, JsonSchema> = { [SUMMARY_KEY]: { type: 'string', description: SUMMARY_DESCRIPTION } };
  for (const field of fields) properties[field.name] = fieldSchema(field);
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

function fieldValidator(field: ReportField): z.ZodType<string | number | boolean> {
  if (typeof field.type !== 'string') return z.enum(field.type as [string, ...string[]]);
  switch (field.type) {
    case 'boolean':
      return z.boolean();
    case 'string':
      return z.string();
    case 'number':
      return z.number();
    case 'integer':
      return z.number().int();
  }
}

export interface ReportAnswer {
  readonly summary: string;
  readonly fields: FieldValues;
}

/** Checks the model's parsed answer; keys it added beyond the schema are dropped. */
export function reportAnswerSchema(fields: readonly ReportField[]): z.ZodType<ReportAnswer> {
  const shape: Record<string, z.ZodType<string | number | boolean>> = {};
  for (const field of fields) shape[field.name] = fieldValidator(field);
  const summary = z.object({ [SUMMARY_KEY]: z.string() });
  return summary.and(z.object(shape)).transform((answer): ReportAnswer => {
    // z.object dropped the keys no field declares; only the summary is left to take out.
    const { [SUMMARY_KEY]: text, ...values } = answer;
    return { summary: text, fields: values };
  });
}

/** `callback_wanted (boolean)`, `sentiment (positive|neutral|negative)`: how prompts:check names a field. */
export function describeField(field: ReportField): string {
  return typeof field.type === 'string' ? field.type : field.type.join('|');
}
