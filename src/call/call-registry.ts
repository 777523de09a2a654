import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Logger } from '../logger.js';
import type { Llm } from '../llm/llm.js';
import type { Prompts } from '../prompts/prompts.js';
import type { VoiceEvent } from '../protocol/events.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import { Call, type ActionSink, type SpeechPacing } from './call.js';
import { toolDefinitions } from './tools.js';

export interface CallRegistryOptions {
  llm: Llm;
  prompts: Prompts;
  transcripts: TranscriptStore;
  transfer: { defaultTarget: string | undefined; targets: Record<string, string> };
  llmTimeoutMs: number;
  playbackGraceMs: number;
  logger: Logger;
}

/** Every call in progress, by session id: the one core both transports drive. */
export class CallRegistry {
  private readonly calls = new Map<string, Call>();
  private readonly tools: ChatCompletionTool[];

  constructor(private readonly options: CallRegistryOptions) {
    this.tools = toolDefinitions(Object.keys(options.transfer.targets));
  }

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

  private create(id: string, sink: ActionSink, pacing: SpeechPacing): Call {
    const logger = this.options.logger.child({ sessionId: id });
    const call = new Call(id, sink, {
      llm: this.options.llm,
      prompts: this.options.prompts,
      tools: this.tools,
      transfer: this.options.transfer,
      llmTimeoutMs: this.options.llmTimeoutMs,
      playbackGraceMs: this.options.playbackGraceMs,
      pacing,
      logger,
      transcript: this.options.transcripts.open(id, logger),
    });
    this.calls.set(id, call);
    return call;
  }
}
