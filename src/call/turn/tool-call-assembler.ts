import type { JsonStringFieldStream } from '../../llm/json-string-field-stream.js';
import type { ToolCallPiece } from '../../llm/delta.js';

/** One tool call as its pieces arrive. */
export interface ToolCallStream {
  readonly index: number;
  id: string;
  name: string;
  args: string;
  /** The arguments grew past the limit: the call cannot be carried out. */
  overflow: boolean;
  /** Set while the arguments of a `speak` call stream into speech. */
  text?: JsonStringFieldStream;
  /** Characters of the speak text already spoken. */
  spoken: string;
}

/** More tool calls than this in one reply is a model gone wrong, not a plan. */
const MAX_TOOL_CALLS = 16;
/** Arguments of a phone agent's tools are short; a looping model must not grow a call without bound. */
const MAX_ARGUMENT_CHARS = 32 * 1024;

/**
 * Puts streamed tool-call pieces together, keyed by their index in a Map (an
 * index is the server's word, never an array position). A piece without an
 * index (Mistral sends whole calls that way) continues the call before it when
 * it names no other call, and is the next call otherwise.
 */
export class ToolCallAssembler {
  private readonly calls = new Map<number, ToolCallStream>();
  private last: ToolCallStream | undefined;
  private nextIndex = 0;

  constructor(private readonly fallbackId: (index: number) => string) {}

  /** Adds one piece; returns its call, or undefined when there are already too many calls. */
  accept(piece: ToolCallPiece): ToolCallStream | undefined {
    const index = piece.index ?? this.indexOfUnindexed(piece);
    let call = this.calls.get(index);
    if (!call) {
      if (this.calls.size >= MAX_TOOL_CALLS) return undefined;
      call = { index, id: piece.id ?? this.fallbackId(index), name: '', args: '', overflow: false, spoken: '' };
      this.calls.set(index, call);
      this.nextIndex = Math.max(this.nextIndex, index + 1);
    }
    this.last = call;
    // Some servers repeat the whole name on every piece, others send it once and then "".
    if (piece.name && piece.name !== call.name) call.name += piece.name;
    if (piece.arguments) {
      if (call.args.length + piece.arguments.length > MAX_ARGUMENT_CHARS) call.overflow = true;
      else call.args += piece.arguments;
    }
    return call;
  }

  /** Every call, in index order. */
  all(): ToolCallStream[] {
    return [...this.calls.values()].sort((a, b) => a.index - b.index);
  }

  private indexOfUnindexed(piece: ToolCallPiece): number {
    const last = this.last;
    const continues = last !== undefined && (piece.id === undefined ? piece.name === undefined : piece.id === last.id);
    return continues ? last.index : this.nextIndex;
  }
}
