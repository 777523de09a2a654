import type { Logger } from '../../logger.js';
import type { TranscriptEntry } from '../ports/transcript.js';
import type { BusinessTool, CallerText, TextSent, ToolOutcome, ToolResult } from '../ports/business-tools.js';
import type { TurnTrace } from '../ports/tracing.js';
import { stableStringify } from '../redelivery.js';
import type { ToolCallRecord } from '../speech/reply.js';
import { holdLinesFor, ToolHold, type HoldTiming } from './tool-hold.js';

/** One call of a business tool the model asked for in this round. */
export interface ToolCallRequest {
  readonly record: ToolCallRecord;
  readonly tool: BusinessTool;
}

/** A tool run as the transcript and the metrics see it. */
export interface ToolRunRecord {
  readonly name: string;
  readonly arguments: string;
  readonly result: string;
  readonly outcome: ToolOutcome;
  readonly durationMs: number;
  readonly sideEffect: boolean;
  /** The model asked again for a change already made: it got the earlier result, nothing ran. */
  readonly reused: boolean;
  /** The hold lines the caller was given while it ran. */
  readonly holdLines: readonly string[];
}

export interface ToolLoopHost {
  readonly log: Logger;
  /** The call's template variables now. */
  variables(): Readonly<Record<string, string | undefined>>;
  /** The general hold lines (prompts/tool-hold.md, tool-hold-again.md). */
  generalLines(): { first: string; again: string };
  playbackRemainingMs(): number;
  ran(run: ToolRunRecord): void;
  /** Sends a text message to the person on the line (ToolRunContext.textCaller); none without. */
  textCaller?: ((text: CallerText) => TextSent) | undefined;
}

/** Never aborted: a change, once sent, runs to its end (its own timeout bounds it). One for all calls. */
const UNSTOPPABLE = new AbortController().signal;

/** Shown to the model for a change still under way when the caller cut in; replaced by the result once it is in. */
const STILL_RUNNING = 'still running when the caller interrupted; its result is not known yet';

/**
 * Runs the business tools of one call: the calls of a round in parallel,
 * hold lines while they take long, and every change (a side-effect tool)
 * at most once per arguments — a model asking again after a barge-in gets
 * the earlier result, so nobody books twice.
 */
export class ToolLoop {
  /** Side-effect runs by tool and arguments, finished or not. */
  private readonly once = new Map<string, Promise<ToolResult>>();
  private hold: ToolHold | undefined;

  constructor(
    private readonly host: ToolLoopHost,
    private readonly timing: HoldTiming,
  ) {}

  /**
   * Runs the calls and fills in each record's result. Resolves when all are
   * done, or at once when `signal` aborts (a barge-in): tools without side
   * effect are aborted with it, changes run on and fill in their result later.
   */
  async run(calls: readonly ToolCallRequest[], signal: AbortSignal, say: (line: string) => boolean, trace: TurnTrace): Promise<void> {
    const lines = holdLinesFor(
      calls.map((c) => c.tool.holdLines),
      this.host.generalLines(),
    );
    // What the caller was told while waiting goes into each run's record.
    const said: string[] = [];
    const sayAndNote = (line: string): boolean => {
      const spoken = say(line);
      if (spoken) said.push(line);
      return spoken;
    };
    const hold = new ToolHold(lines, { say: sayAndNote, playbackRemainingMs: () => this.host.playbackRemainingMs() }, this.timing);
    this.hold = hold;
    hold.start();
    try {
      await untilAborted(Promise.all(calls.map((call) => this.runOne(call, signal, said, trace))), signal);
    } finally {
      hold.stop();
      if (this.hold === hold) this.hold = undefined;
    }
  }

  /** A hold line now, if tools are running (a webhook request about to time out). */
  holdNow(): boolean {
    return this.hold?.now() ?? false;
  }

  private async runOne({ record, tool }: ToolCallRequest, signal: AbortSignal, said: readonly string[], trace: TurnTrace): Promise<void> {
    const key = tool.sideEffect ? `${tool.name}\u0000${canonical(record.arguments)}` : undefined;
    const earlier = key === undefined ? undefined : this.once.get(key);
    record.written = true;
    const span = trace.tool({
      name: tool.name,
      callId: record.id,
      source: tool.source,
      sideEffect: tool.sideEffect,
      reused: earlier !== undefined,
      arguments: record.arguments,
    });
    if (earlier) {
      record.result = STILL_RUNNING;
      const result = await earlier;
      record.result = result.content;
      span.end(result.outcome, result.content);
      this.host.ran({ ...runOf(record, tool, result, 0, said), reused: true });
      return;
    }
    if (tool.sideEffect) record.result = STILL_RUNNING;
    const startedAt = performance.now();
    const running = tool
      .run(record.arguments, {
        variables: this.host.variables(),
        signal: tool.sideEffect ? UNSTOPPABLE : signal,
        log: this.host.log,
        propagation: span.propagation,
        // Only to a tool that says it texts: no other tool is given the means.
        textCaller: tool.textsCaller ? this.host.textCaller : undefined,
      })
      // A tool must not reject; if one does anyway, the model hears of a failure and the call goes on.
      .catch((error: unknown): ToolResult => {
        this.host.log.error({ err: error, tool: tool.name }, 'tool failed unexpectedly');
        return { content: `error: ${tool.name} failed`, outcome: 'error' };
      });
    if (key !== undefined) this.once.set(key, running);
    const result = await running;
    record.result = result.content;
    span.end(result.outcome, result.content);
    // Nothing was done, so asking again may: the arguments were wrong, or the system could not be reached.
    if (key !== undefined && (result.outcome === 'invalid' || result.outcome === 'unavailable')) this.once.delete(key);
    this.host.ran(runOf(record, tool, result, performance.now() - startedAt, said));
  }
}

/** The transcript line of a run: the result as the model read it (already capped by the tool). */
export function transcriptEntryOf(run: ToolRunRecord): TranscriptEntry {
  return {
    role: 'tool',
    text: run.result,
    name: run.name,
    arguments: run.arguments,
    outcome: run.outcome,
    duration_ms: run.durationMs,
    ...(run.sideEffect ? { side_effect: true } : {}),
    ...(run.reused ? { reused: true } : {}),
    ...(run.holdLines.length > 0 ? { hold_lines: run.holdLines } : {}),
  };
}

function runOf(record: ToolCallRecord, tool: BusinessTool, result: ToolResult, durationMs: number, said: readonly string[]): ToolRunRecord {
  return {
    name: tool.name,
    arguments: record.arguments,
    result: result.content,
    outcome: result.outcome,
    durationMs: Math.round(durationMs),
    sideEffect: tool.sideEffect,
    reused: false,
    holdLines: [...said],
  };
}

/** The same arguments however the model orders or spaces them. */
function canonical(argumentsJson: string): string {
  try {
    return stableStringify(JSON.parse(argumentsJson || '{}'));
  } catch {
    return argumentsJson;
  }
}

function untilAborted(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void work.then(done, done);
  });
}
