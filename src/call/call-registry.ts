import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Logger } from '../logger.js';
import type { Llm } from '../llm/llm.js';
import type { PendingCalls } from '../outbound/pending-calls.js';
import type { PromptSet } from '../prompts/prompt-store.js';
import type { VoiceEvent } from '../protocol/events.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import { Call, type ActionSink, type SpeechPacing } from './call.js';
import { toolDefinitions } from './tools.js';

export interface CallRegistryOptions {
  llm: Llm;
  /** The current prompts; read once per call, so edits apply from the next call. */
  prompts: () => PromptSet;
  pendingCalls: PendingCalls;
  timeZone: string | undefined;
  transcripts: TranscriptStore;
  transfer: { defaultTarget: string | undefined; targets: Record<string, string> };
  llmTimeoutMs: number;
  llmTotalTimeoutMs: number;
  llmMaxFailures: number;
  playbackGraceMs: number;
  logger: Logger;
}

interface CallSetup {
  tools: ChatCompletionTool[];
  transfer: { defaultTarget: string | undefined; targets: Record<string, string> };
}

/** Every call in progress, by session id: the one core both transports drive. */
export class CallRegistry {
  private readonly calls = new Map<string, Call>();
  /** Tools and transfer targets depend on the prompt version; computed once per version. */
  private readonly setups = new WeakMap<PromptSet, CallSetup>();

  constructor(private readonly options: CallRegistryOptions) {}

  get size(): number {
    return this.calls.size;
  }

  get(sessionId: string): Call | undefined {
    return this.calls.get(sessionId);
  }

  /**
   * Routes one event to its call; session_start creates the call. Returns the
   * call, or undefined when the event names a session that does not exist.
   */
  dispatch(event: VoiceEvent, sink: ActionSink, pacing: SpeechPacing = 'stream'): Call | undefined {
    const id = event.session.id;
    let call = this.calls.get(id);
    if (!call) {
      if (event.type !== 'session_start') return undefined;
      call = this.create(id, sink, pacing);
    } else {
      call.attach(sink);
    }
    if (event.type === 'session_end') {
      void this.end(id, event.reason ?? 'session_end', 'service');
    } else {
      call.handle(event);
    }
    return call;
  }

  /** Ends a call and frees it; `origin` tells who ended it (the service, or Hotline: socket closed, shutdown). */
  end(sessionId: string, reason: string, origin: 'service' | 'hotline' = 'hotline'): Promise<void> {
    const call = this.calls.get(sessionId);
    if (!call) return Promise.resolve();
    this.calls.delete(sessionId);
    return this.options.transcripts.track(call.end(reason, origin));
  }

  async endAll(reason: string): Promise<void> {
    await Promise.all([...this.calls.keys()].map((id) => this.end(id, reason)));
    await this.options.transcripts.flush();
  }

  private setupFor(prompts: PromptSet): CallSetup {
    let setup = this.setups.get(prompts);
    if (!setup) {
      // Named targets from the system prompt's front matter add to (and override) TRANSFER_TARGETS.
      const targets = { ...this.options.transfer.targets, ...prompts.settings.transferTargets };
      setup = {
        tools: toolDefinitions(Object.keys(targets)),
        transfer: { defaultTarget: this.options.transfer.defaultTarget, targets },
      };
      this.setups.set(prompts, setup);
    }
    return setup;
  }

  private create(id: string, sink: ActionSink, pacing: SpeechPacing): Call {
    const logger = this.options.logger.child({ sessionId: id });
    const prompts = this.options.prompts();
    const { tools, transfer } = this.setupFor(prompts);
    const { pendingCalls } = this.options;
    const call = new Call(id, sink, {
      llm: this.options.llm,
      prompts,
      tools,
      transfer,
      takeOutboundRequest: (to) => pendingCalls.take(to),
      timeZone: this.options.timeZone,
      llmTimeoutMs: this.options.llmTimeoutMs,
      llmTotalTimeoutMs: this.options.llmTotalTimeoutMs,
      llmMaxFailures: this.options.llmMaxFailures,
      playbackGraceMs: this.options.playbackGraceMs,
      pacing,
      logger,
      transcript: this.options.transcripts.open(id, logger),
    });
    this.calls.set(id, call);
    return call;
  }
}
