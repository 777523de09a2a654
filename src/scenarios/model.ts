/**
 * The scripted LLM of a scenario: its `model:` rules, or the built-in demo
 * script. Every reply is recorded with the moment it was asked for, so the
 * runner can tell a stale sentence (from a reply the caller interrupted) from
 * a sentence of the reply that followed.
 */
import { performance } from 'node:perf_hooks';
import { FOUND_MARK, NOTHING_MARK, withoutKnowledgeNote } from '../call/knowledge-note.js';
import { demoScript } from '../demo/demo-script.js';
import type { ChatRequestBody, Script, ScriptedReply } from '../llm/scripted-server.js';
import { textMatcher } from './pattern.js';
import type { ModelReply, ModelRule } from './schema.js';

export interface RecordedReply {
  /** performance.now() when the request reached the script. */
  at: number;
  /** The caller's last words the reply was chosen for. */
  heard: string;
  /** What the reply would say: its content and the text of its speak calls. */
  text: string;
}

/** What the runner may ask about the model while a scenario runs (scripted models only). */
export interface ModelLog {
  readonly replies: readonly RecordedReply[];
  /** Resolves once every request so far has ended, or after timeoutMs. */
  idle(timeoutMs: number): Promise<void>;
  /** Resolves true once a request has reached the script at or after `since`, false after timeoutMs. */
  askedSince(since: number, timeoutMs: number): Promise<boolean>;
}

export interface ScenarioModel {
  script: Script;
  replies: RecordedReply[];
  askedSince: ModelLog['askedSince'];
}

export function scenarioModel(rules: readonly ModelRule[] | undefined): ScenarioModel {
  const replies: RecordedReply[] = [];
  const waiting = new Set<() => void>();
  const choose = rules ? ruleScript(rules) : demoScript;
  const script: Script = (request) => {
    const heard = lastUserText(request);
    const reply = choose(request);
    replies.push({ at: performance.now(), heard, text: spokenText(reply) });
    for (const wake of waiting) wake();
    return reply;
  };
  const askedSince = (since: number, timeoutMs: number): Promise<boolean> => {
    if (replies.some((reply) => reply.at >= since)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (asked: boolean): void => {
        clearTimeout(timer);
        waiting.delete(wake);
        resolve(asked);
      };
      const wake = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      waiting.add(wake);
    });
  };
  return { script, replies, askedSince };
}

/**
 * The first rule (with uses left) whose `when` matches the caller's last
 * words and whose `when_tool_result`, if any, matches a result of the tools
 * just called; else the default rule.
 */
function ruleScript(rules: readonly ModelRule[]): (request: ChatRequestBody) => ScriptedReply {
  const compiled = rules.map((rule) => {
    const words = anyOf(rule.when);
    const results = rule.when_tool_result === undefined ? undefined : anyOf(rule.when_tool_result);
    const matches = (heard: string, toolResults: readonly string[]): boolean =>
      words(heard) && (results === undefined || toolResults.some(results));
    return { rule, matches, used: 0 };
  });
  return (request) => {
    const heard = lastUserText(request);
    const toolResults = trailingToolResults(request);
    const entry = compiled.find((c) => (c.rule.times === undefined || c.used < c.rule.times) && c.matches(heard, toolResults));
    // Spoken, so that a failing expectation shows which words (or which tool result) no rule covered.
    if (!entry) {
      const after = toolResults.length === 0 ? '' : ` after the tool result ${toolResults.map((r) => JSON.stringify(r)).join(', ')}`;
      return { content: `No model rule matches "${heard}"${after}.` };
    }
    entry.used++;
    return toScriptedReply(entry.rule.reply);
  };
}

/** A test of text against `when` patterns: any of them; no patterns, anything. */
export function anyOf(when: string | readonly string[] | undefined): (text: string) => boolean {
  const patterns = when === undefined ? [] : typeof when === 'string' ? [when] : when;
  const matchers = patterns.map(textMatcher);
  return (text) => matchers.length === 0 || matchers.some((m) => m(text));
}

/** The results of the tools called last, when the request ends with them (the model is to answer from them). */
export function trailingToolResults(request: ChatRequestBody): string[] {
  const results: string[] = [];
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role !== 'tool') break;
    const { content } = message;
    results.unshift(typeof content === 'string' ? content : content.map((part) => part.text).join(''));
  }
  return results;
}

export function toScriptedReply(reply: ModelReply): ScriptedReply {
  const scripted: ScriptedReply = {};
  if (reply.content !== undefined) scripted.content = reply.content;
  if (reply.tool_calls) {
    scripted.toolCalls = reply.tool_calls.map((call) => ({
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    }));
  }
  if (reply.status !== undefined) scripted.status = reply.status;
  if (reply.error_message !== undefined) scripted.errorMessage = reply.error_message;
  if (reply.hang !== undefined) scripted.hang = reply.hang;
  if (reply.break_after_tokens !== undefined) scripted.breakAfterTokens = reply.break_after_tokens;
  if (reply.ttft_ms !== undefined) scripted.ttftMs = reply.ttft_ms;
  if (reply.token_delay_ms !== undefined) scripted.tokenDelayMs = reply.token_delay_ms;
  return scripted;
}

function spokenText(reply: ScriptedReply): string {
  if (reply.status !== undefined && reply.status !== 200) return '';
  const parts = [reply.content ?? ''];
  for (const call of reply.toolCalls ?? []) {
    if (call.name !== 'speak') continue;
    try {
      const args: unknown = JSON.parse(call.arguments);
      if (args && typeof args === 'object' && 'text' in args && typeof args.text === 'string') parts.push(args.text);
    } catch {
      // Broken arguments speak nothing.
    }
  }
  return parts.join(' ');
}

/** The caller's last words in a request: what a rule's `when` is matched against, without the documents' note after them. */
export function lastUserText(request: ChatRequestBody): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role !== 'user') continue;
    const { content } = message;
    if (typeof content === 'string') return withoutKnowledgeNote(content);
    return content.map((part) => (part.type === 'text' && !part.text.startsWith(FOUND_MARK) && !part.text.startsWith(NOTHING_MARK) ? part.text : '')).join(' ');
  }
  return '';
}
