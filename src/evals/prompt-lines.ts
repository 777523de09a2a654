/**
 * Which of a prompt folder's files one eval call really used: the lines
 * Hotline speaks itself (greeting.md, transfer-failed.md, a tool's hold
 * lines …), found in the call as the caller heard it, and the tool files
 * whose request was made. An offline run says so, because what its scripted
 * agent says comes from the eval's rules, never from these files.
 */
import type { BusinessTool } from '../call/ports/business-tools.js';
import type { ToolRunSummary } from '../call/ports/call-summary.js';
import { PROMPT_FILES } from '../prompts/prompt-files.js';
import type { PromptSet } from '../prompts/prompt-store.js';
import type { TranscriptLine } from './heard-transcript.js';

/** The prompt files of a folder an eval call could use, and those it used. */
export interface PromptUse {
  /** On disk: the prompt files in use, and the tool files whose tools are offered. */
  readonly present: readonly string[];
  readonly used: readonly string[];
}

/** Stands for a placeholder's value: nothing a file can contain. */
const HOLE = '\u0001';
/** A cut line counts from this many words on: fewer could start anything. */
const CUT_MIN_WORDS = 2;

interface LineMatcher {
  readonly file: string;
  /** The line's words between its placeholders. */
  readonly pieces: readonly string[];
  readonly whole: RegExp;
}

/** What the caller heard, reduced to words: SSML, markdown and punctuation are not what tells two lines apart. */
function words(text: string): string {
  return (text.replace(/<[^>]*>/g, ' ').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

function matcher(file: string, rendered: string): LineMatcher | undefined {
  const pieces = rendered.split(HOLE).map(words);
  if (pieces.every((piece) => piece === '')) return undefined;
  const source = pieces.map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*?');
  return { file, pieces, whole: new RegExp(`^ ?${source} ?$`, 'u') };
}

/** The lines Hotline speaks from the folder's files (system.md is the model's, not spoken). */
function lineMatchers(prompts: PromptSet, tools: readonly BusinessTool[]): LineMatcher[] {
  const matchers: (LineMatcher | undefined)[] = [];
  for (const spec of PROMPT_FILES) {
    if (spec.name === 'system') continue;
    const holes = Object.fromEntries(prompts.placeholders[spec.name].map((name) => [name, HOLE]));
    matchers.push(matcher(spec.file, prompts.render(spec.name, holes, () => undefined)));
  }
  for (const tool of tools) for (const line of tool.holdLines) if (tool.source) matchers.push(matcher(tool.source, line));
  return matchers.filter((m) => m !== undefined);
}

function heardAs(m: LineMatcher, line: TranscriptLine): boolean {
  const heard = words(line.text);
  if (heard === '') return false;
  if (m.whole.test(heard)) return true;
  if (!line.cut || heard.split(' ').length < CUT_MIN_WORDS) return false;
  // Cut short: the words heard begin the line (or the line's words up to its first placeholder begin them).
  const head = m.pieces[0] ?? '';
  return head !== '' && (`${head} `.startsWith(`${heard} `) || (head.includes(' ') && heard.startsWith(`${head} `)));
}

export interface CallUse {
  readonly prompts: PromptSet;
  /** Prompts: in use, as the prompt folder gave them. */
  readonly promptFiles: readonly string[];
  /** The tool files' tools, as offered. */
  readonly fileTools: readonly BusinessTool[];
  /** Names the eval stubs: its stub ran, not the file. */
  readonly stubbed: ReadonlySet<string>;
  readonly transcript: readonly TranscriptLine[];
  readonly toolRuns: readonly ToolRunSummary[];
}

export function promptUse(call: CallUse): PromptUse {
  const fileTools = call.fileTools.filter((tool) => !call.stubbed.has(tool.name) && tool.source !== undefined);
  const matchers = lineMatchers(call.prompts, fileTools);
  const used = new Set<string>();
  for (const line of call.transcript) {
    if (line.who !== 'agent') continue;
    for (const m of matchers) if (heardAs(m, line)) used.add(m.file);
  }
  for (const run of call.toolRuns) {
    const source = fileTools.find((tool) => tool.name === run.name)?.source;
    if (source) used.add(source);
  }
  const present = [...new Set([...call.promptFiles, ...fileTools.flatMap((tool) => (tool.source ? [tool.source] : []))])];
  return { present, used: [...used].sort() };
}
