import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import { SPEAK } from '../turn/tools.js';

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
  /** The sentence with its SSML tags, when it goes out as SSML. */
  ssml?: string;
  /** A hold line: the caller heard it, but the model's own next request does not show it as the model's words. */
  filler?: boolean;
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
  /** Its run is in the transcript already (a business tool), with duration and outcome. */
  written?: boolean;
}

/** One LLM request of the reply: what it said, and the tools it called. */
interface Round {
  readonly segments: Segment[];
  readonly toolCalls: ToolCallRecord[];
}

/** `heard`: what the caller heard (history). `generated`: everything written so far (the turn's next request). */
export type ReplyView = 'heard' | 'generated';

export const INTERRUPTED_MARK = '[interrupted by the caller]';

/**
 * What one assistant reply said, as far as the caller heard it. History keeps
 * the reply by reference, so a barge-in after generation still cuts it. A
 * reply may span several LLM requests when the model calls tools.
 */
export class Reply {
  private readonly rounds: Round[] = [{ segments: [], toolCalls: [] }];
  interrupted = false;
  private chunksAdded = 0;

  /** A reply the caller heard in full in an earlier life of the call (read back from its transcript). */
  static heard(text: string): Reply {
    const reply = new Reply();
    reply.beginContent();
    reply.addChunk(text).delivered = true;
    return reply;
  }

  private get round(): Round {
    return this.rounds[this.rounds.length - 1]!;
  }

  /** The model is asked again, after the results of its tool calls. */
  beginRound(): void {
    this.rounds.push({ segments: [], toolCalls: [] });
  }

  beginContent(): void {
    this.round.segments.push({ kind: 'content', chunks: [] });
  }

  beginSpeak(toolCallId: string): void {
    this.round.segments.push({ kind: 'speak', toolCallId, chunks: [] });
  }

  addChunk(text: string): SpokenChunk {
    const { segments } = this.round;
    let segment = segments.at(-1);
    if (!segment) {
      segment = { kind: 'content', chunks: [] };
      segments.push(segment);
    }
    const chunk: SpokenChunk = { text, reply: this, delivered: false };
    segment.chunks.push(chunk);
    this.chunksAdded += 1;
    return chunk;
  }

  addToolCall(record: ToolCallRecord): void {
    this.round.toolCalls.push(record);
  }

  /** Non-speech tool calls of every round. */
  get toolCalls(): ToolCallRecord[] {
    return this.rounds.flatMap((r) => r.toolCalls);
  }

  /** Sentences generated, delivered or not; a counter, since the speak path reads it for every sentence. */
  get chunkCount(): number {
    return this.chunksAdded;
  }

  get deliveredCount(): number {
    let n = 0;
    for (const round of this.rounds) for (const s of round.segments) for (const c of s.chunks) if (c.delivered) n += 1;
    return n;
  }

  /** What the caller heard. */
  heardText(): string {
    return joinText(this.rounds.flatMap((r) => r.segments.map(heardOf)));
  }

  /** Everything the model wrote to be spoken, heard or not (hold lines aside). */
  generatedText(): string {
    return joinText(this.rounds.flatMap((r) => r.segments.map(generatedOf)));
  }

  /** Chat Completions messages for this reply: a valid sequence, every tool call answered. */
  toMessages(view: ReplyView = 'heard'): ChatCompletionMessageParam[] {
    const textOf = view === 'heard' ? heardOf : generatedOf;
    const built: { text: string; calls: ChatCompletionMessageToolCall[]; results: ChatCompletionToolMessageParam[] }[] = [];
    for (const round of this.rounds) {
      const content: string[] = [];
      const calls: ChatCompletionMessageToolCall[] = [];
      const results: ChatCompletionToolMessageParam[] = [];
      for (const segment of round.segments) {
        const text = textOf(segment);
        if (text === '') continue;
        if (segment.kind === 'content' || !segment.toolCallId) {
          content.push(text);
          continue;
        }
        calls.push(toolCall(segment.toolCallId, SPEAK, JSON.stringify({ text })));
        const cut = view === 'heard' && segment.chunks.some((c) => c.heard !== undefined || !c.delivered);
        results.push(toolResult(segment.toolCallId, cut ? `interrupted: the caller heard only "${text}"` : 'spoken'));
      }
      for (const call of round.toolCalls) {
        calls.push(toolCall(call.id, call.name, call.arguments || '{}'));
        results.push(toolResult(call.id, call.result));
      }
      if (content.length > 0 || calls.length > 0) built.push({ text: joinText(content), calls, results });
    }
    if (view === 'heard' && this.interrupted) {
      const last = built.findLast((b) => b.text !== '');
      if (last) last.text = `${last.text} ${INTERRUPTED_MARK}`;
    }
    return built.flatMap(({ text, calls, results }): ChatCompletionMessageParam[] => [
      calls.length > 0
        ? { role: 'assistant', content: text === '' ? null : text, tool_calls: calls }
        : { role: 'assistant', content: text },
      ...results,
    ]);
  }
}

function heardOf(segment: Segment): string {
  return joinText(segment.chunks.map((c) => c.heard ?? (c.delivered ? c.text : '')));
}

function generatedOf(segment: Segment): string {
  return joinText(segment.chunks.map((c) => (c.filler ? '' : c.text)));
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
