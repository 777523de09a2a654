import type { Logger } from '../../logger.js';
import type { CallMetrics } from '../ports/call-metrics.js';
import type { TranscriptLog } from '../ports/transcript.js';
import type { BusinessTool, CallerText, TextSent, ToolBox } from '../ports/business-tools.js';
import type { CallActivityTracker } from '../ports/call-activity.js';
import type { CallPrompts } from '../call-prompts.js';
import type { CallRecord } from '../call-record.js';
import type { TurnTrace } from '../ports/tracing.js';
import { ToolLoop, transcriptEntryOf, type ToolCallRequest } from './tool-loop.js';
import type { Voice } from '../speech/voice.js';

export interface CallToolsDeps {
  log: Logger;
  toolBox: ToolBox | undefined;
  prompts: CallPrompts;
  voice: Voice;
  transcript: TranscriptLog;
  record: CallRecord;
  metrics: CallMetrics;
  activity: CallActivityTracker;
  timing: { holdMs: number; repeatMs: number };
  /** The call's text messages to the person on the line (see CallerTexts). */
  texts?: { readonly available: boolean; send(text: CallerText): TextSent } | undefined;
}

/**
 * The business tools of one call: which are offered to a call of its
 * direction, and their runs — held for with lines and the hold clip, and
 * each written to the transcript, the call's record and the metrics.
 */
export class CallTools {
  /** Made at the first tool call: most calls never need one. */
  private loop: ToolLoop | undefined;

  constructor(private readonly deps: CallToolsDeps) {}

  /** The business tools on offer now, for a call of this direction. */
  offered(): readonly BusinessTool[] {
    const tools = this.deps.toolBox?.tools() ?? [];
    const direction = this.deps.prompts.variables.direction === 'outbound' ? 'outbound' : 'inbound';
    const offered = tools.some((t) => t.directions) ? tools.filter((t) => !t.directions || t.directions.includes(direction)) : tools;
    // A tool that texts the person on the line only while the call can send one more.
    return offered.some((t) => t.textsCaller) && !this.deps.texts?.available ? offered.filter((t) => !t.textsCaller) : offered;
  }

  /** Runs a round of the model's tool calls, traced under the turn's `trace`; `say` speaks a hold line, and the hold clip follows each one. */
  run(calls: readonly ToolCallRequest[], signal: AbortSignal, say: (line: string) => boolean, trace: TurnTrace): Promise<void> {
    return this.deps.activity.duringTools(this.toolLoop().run(calls, signal, (line) => say(line) && this.playHoldClip(), trace));
  }

  /** A webhook request waits on a running tool: its hold line now. False when no tool runs. */
  holdNow(): boolean {
    return this.loop?.holdNow() ?? false;
  }

  private toolLoop(): ToolLoop {
    const { deps } = this;
    this.loop ??= new ToolLoop(
      {
        log: deps.log,
        variables: () => deps.prompts.variables,
        generalLines: () => ({ first: deps.prompts.render('toolHold'), again: deps.prompts.render('toolHoldAgain') }),
        playbackRemainingMs: () => deps.voice.playback.remainingMs(),
        ...(deps.texts && { textCaller: (text: CallerText) => deps.texts!.send(text) }),
        ran: (run) => {
          deps.transcript.append(transcriptEntryOf(run));
          deps.record.toolRan(run);
          if (!run.reused) deps.metrics.toolRan(run.name, run.durationMs, run.outcome);
        },
      },
      deps.timing,
    );
    return this.loop;
  }

  /** system.md's `hold` clip after each hold line while a tool runs; true whether there is one or not. */
  private playHoldClip(): true {
    const clip = this.deps.prompts.audio('hold');
    if (clip) this.deps.voice.clip(clip);
    return true;
  }
}
