/**
 * A judge's verdict read from what it answered: the verdict tool's arguments,
 * a JSON object in its text, or — from a server that answers in prose — the
 * word in the text that IS the verdict. "Passing this would be wrong. FAIL: …"
 * is a fail: a word that merely starts like "pass", a PASS that is denied,
 * asked about or called wrong, is no verdict. What cannot be read with
 * certainty is no verdict at all: the criterion is then not graded, never
 * passed.
 */

import { closingBrace } from '../json-braces.js';

export interface Verdict {
  readonly pass: boolean;
  readonly reason: string;
}

/** Longest reason kept from a prose answer. */
const REASON_MAX = 500;

export function readVerdict(text: string): Verdict | undefined {
  const objects = jsonObjects(text).map(verdictOf).filter((v) => v !== null);
  if (objects.length > 0) {
    // A JSON verdict is what was asked for; objects that disagree say nothing for certain.
    const [first] = objects;
    if (first === undefined || objects.some((v) => v === undefined || v.pass !== first.pass)) return undefined;
    return first;
  }
  return proseVerdict(text);
}

/**
 * A verdict of a parsed object: `{pass, reason}` (or `{verdict: "PASS"}`);
 * null for an object that is no verdict, undefined for one whose verdict
 * cannot be read (`"pass": "maybe"`).
 */
function verdictOf(parsed: unknown): Verdict | undefined | null {
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  const record = parsed as Record<string, unknown>;
  const field = 'pass' in record ? record.pass : 'verdict' in record ? record.verdict : null;
  if (field === null && !('pass' in record)) return null;
  const pass = passOf(field, 'pass' in record);
  if (pass === undefined) return undefined;
  const reason = typeof record.reason === 'string' ? record.reason.trim() : '';
  return { pass, reason: reason || (pass ? 'met' : 'not met') };
}

function passOf(value: unknown, isPassField: boolean): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toLowerCase();
  if (['pass', 'passed', ...(isPassField ? ['true'] : [])].includes(word)) return true;
  if (['fail', 'failed', ...(isPassField ? ['false'] : [])].includes(word)) return false;
  return undefined;
}

/** Every top-level `{…}` in the text that parses as JSON, in order. */
function jsonObjects(text: string): unknown[] {
  const found: unknown[] = [];
  let from = text.indexOf('{');
  while (from >= 0) {
    const end = closingBrace(text, from);
    if (end < 0) break;
    try {
      found.push(JSON.parse(text.slice(from, end + 1)));
      from = text.indexOf('{', end + 1);
    } catch {
      from = text.indexOf('{', from + 1);
    }
  }
  return found;
}

/** Standalone verdict words only: "Passing", "passable", "failure" are never one. */
const VERDICT_WORD = /\b(pass(?:ed)?|fail(?:ed)?)\b/gi;
/** A word that denies what follows it in its clause: "would not PASS", "isn't a PASS", "no PASS". */
const DENIAL = /(?:\b(?:not|no|never|neither|nor|without|cannot|hardly)\b|n't\b)[^.!?;:\n]*$/i;
/** The verdict named as such: "Verdict: FAIL", "my verdict is pass", "Result — PASS". */
const LABEL = /\b(?:verdict|result|grade|grading|decision|outcome|rating|answer)[\s*_"'`]*(?:is|would be|:|=|-|–|—)?[\s*_"'`]*$/i;
/** Said to be wrong, in the same sentence: "a PASS would be wrong here". */
const CALLED_WRONG = /^[^.!?;\n]*?\b(?:would be|is|seems|feels)\s+(?:wrong|incorrect|a mistake|unjustified|unwarranted|too generous)\b/i;
/** At the start of the answer, a line or a sentence, markdown and quotes aside: "**Pass** - …", "> FAIL", "… wrong. Fail: …". */
const LINE_START = /(?:^|\n|[.!?]\s)[\s*_#>"'`•-]*$/;
/** What makes a word at a line's start a verdict and not a sentence's first word: "Pass -", "Fail.", "FAIL:", the end. */
const AFTER_LEADING = /^[*_"'`]*\s*(?:[:.!,)\-–—]|$)/m;

interface Mark {
  readonly pass: boolean;
  /** 3: named as the verdict; 2: heads a line or sentence, or capitals with a colon; 1: capitals anywhere. */
  readonly strength: number;
  readonly start: number;
  readonly end: number;
}

function proseVerdict(text: string): Verdict | undefined {
  const marks: Mark[] = [];
  for (const match of text.matchAll(VERDICT_WORD)) {
    const word = match[0];
    const start = match.index;
    const end = start + word.length;
    const before = text.slice(0, start);
    const after = text.slice(end);
    if (/^\s*\?/.test(after) || DENIAL.test(lastWords(before)) || CALLED_WRONG.test(after)) continue;
    const capitals = word === word.toUpperCase();
    const strength = LABEL.test(before)
      ? 3
      : (LINE_START.test(before) && AFTER_LEADING.test(after)) || (capitals && /^[*_]*\s*:/.test(after))
        ? 2
        : capitals
          ? 1
          : 0;
    if (strength > 0) marks.push({ pass: word.toLowerCase().startsWith('pass'), strength, start, end });
  }
  const strongest = Math.max(0, ...marks.map((m) => m.strength));
  // The last of the strongest: a judge that reasons aloud ends with its verdict.
  const chosen = marks.filter((m) => m.strength === strongest).at(-1);
  if (!chosen) return undefined;
  const rest = text
    .slice(chosen.end)
    .replace(/^[\s*_"'`:.!,)\-–—]+/, '')
    .trim();
  // The verdict last: its reasoning came before it.
  const reasoning = text
    .slice(0, chosen.start)
    .replace(/[\s*_"'`:,(\-–—]*(?:verdict|result|grade|grading|decision|outcome|rating|answer)?[\s*_"'`:=\-–—]*$/i, '')
    .trim();
  const reason = (rest || reasoning).slice(0, REASON_MAX);
  return { pass: chosen.pass, reason: reason || (chosen.pass ? 'met' : 'not met') };
}

/** The last few words before a verdict word, in its own clause: how far a denial reaches. */
function lastWords(before: string): string {
  // "No, FAIL" is a fail: a comma or a dash ends what the "no" denies.
  const clause = before.split(/[.!?;:,\n—–]/).at(-1) ?? '';
  return clause.split(/\s+/).slice(-4).join(' ');
}
