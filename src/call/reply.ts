import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import { SPEAK } from './tools.js';

/**
 * One sentence of a reply. It counts as heard once delivered to the voice
 * service (transports may hold sentences back and deliver several as one
 * speak); `heard` is set when the caller cut it short.
 */
export interface SpokenChunk {
  readonly text: string;
  readonly reply: Reply;
  delivered: boolean;
  heard?: string;
}

interface Segment {
  /** Plain assistant content, or the text argument of one `speak` tool call. */
  readonly kind: 'content' | 'speak';
  readonly toolCallId?: string;
  readonly chunks: SpokenChunk[];
}

/** A non-speech tool call (transfer, hangup, unknown) and the result the model will see. */
export interface ToolCallRecord {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
  result: string;
}

export const INTERRUPTED_MARK = '[interrupted by the caller]';

/**
 * What one assistant reply said, as far as the caller heard it. History keeps
 * the reply by reference, so a barge-in after generation still cuts it.
 */
export class Reply {
  private readonly segments: Segment[] = [];
  readonly toolCalls: ToolCallRecord[] = [];
  interrupted = false;
  private chunksAdded = 0;

  beginContent(): void {
    this.segments.push({ kind: 'content', chunks: [] });
  }

  beginSpeak(toolCallId: string): void {
    this.segments.push({ kind: 'speak', toolCallId, chunks: [] });
  }

  addChunk(text: string): SpokenChunk {
    let segment = this.segments.at(-1);
    if (!segment) {
      segment = { kind: 'content', chunks: [] };
      this.segments.push(segment);
    }
    const chunk: SpokenChunk = { text, reply: this, delivered: false };
    segment.chunks.push(chunk);
    this.chunksAdded += 1;
    return chunk;
  }

  /** Sentences generated, delivered or not; a counter, since the speak path reads it for every sentence. */
  get chunkCount(): number {
    return this.chunksAdded;
  }

  get deliveredCount(): number {
    return this.segments.reduce((n, s) => n + s.chunks.filter((c) => c.delivered).length, 0);
  }

  /** What the caller heard. */
  heardText(): string {
    return joinText(this.segments.map(heardOf));
  }

  /** Chat Completions messages for this reply: a valid sequence, every tool call answered. */
  toMessages(): ChatCompletionMessageParam[] {
    const content: string[] = [];
    const calls: ChatCompletionMessageToolCall[] = [];
    const results: ChatCompletionToolMessageParam[] = [];
    for (const segment of this.segments) {
      const heard = heardOf(segment);
      if (heard === '') continue;
      if (segment.kind === 'content' || !segment.toolCallId) {
        content.push(heard);
        continue;
      }
      calls.push(toolCall(segment.toolCallId, SPEAK, JSON.stringify({ text: heard })));
      const cut = segment.chunks.some((c) => c.heard !== undefined || !c.delivered);
      results.push(toolResult(segment.toolCallId, cut ? `interrupted: the caller heard only "${heard}"` : 'spoken'));
    }
    for (const call of this.toolCalls) {
      calls.push(toolCall(call.id, call.name, call.arguments || '{}'));
      results.push(toolResult(call.id, call.result));
    }
    if (content.length === 0 && calls.length === 0) return [];
    let text = joinText(content);
    if (this.interrupted && text !== '') text = `${text} ${INTERRUPTED_MARK}`;
    const assistant: ChatCompletionMessageParam =
      calls.length > 0
        ? { role: 'assistant', content: text === '' ? null : text, tool_calls: calls }
        : { role: 'assistant', content: text };
    return [assistant, ...results];
  }
}

function heardOf(segment: Segment): string {
  return joinText(segment.chunks.map((c) => c.heard ?? (c.delivered ? c.text : '')));
}

function joinText(parts: readonly string[]): string {
  return parts.filter((p) => p !== '').join(' ');
}

function toolCall(id: string, name: string, args: string): ChatCompletionMessageToolCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

function toolResult(id: string, content: string): ChatCompletionToolMessageParam {
  return { role: 'tool', tool_call_id: id, content };
}
