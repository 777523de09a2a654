/**
 * A scenario's `tools:`: business tools that answer from the scenario file
 * instead of a real system, offered to Hotline before the tool files' (a stub
 * named like a shipped tool replaces it). Each records its calls — arguments,
 * start and end — so `expect: { tool: … }` can check what the model asked and
 * what the caller heard meanwhile.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { BusinessTool, ToolBox, ToolResult, ToolRunContext } from '../call/ports/business-tools.js';
import type { ToolStub } from './schema.js';
import { WakeUp } from './wake-up.js';

export interface StubCall {
  readonly name: string;
  /** As the model sent them: parsed JSON, or the text itself when it is not JSON. */
  readonly arguments: unknown;
  /** performance.now(), comparable with the actions' receivedAt. */
  readonly startedAt: number;
  /** Undefined while it runs. */
  endedAt: number | undefined;
  outcome: ToolResult['outcome'] | undefined;
}

/** What a scenario may ask about its stubs while it runs. */
export interface ToolCallLog {
  /** Every call so far, oldest first. */
  readonly calls: readonly StubCall[];
  readonly stubbed: readonly string[];
  /**
   * Resolves with check()'s first defined result, checking now and whenever
   * a call starts or ends; with undefined once timeoutMs pass without one.
   */
  until<T>(check: () => T | undefined, timeoutMs: number): Promise<T | undefined>;
}

const ABORTED: ToolResult = { content: 'not done: the caller interrupted', outcome: 'aborted' };

export class ToolStubs implements ToolBox, ToolCallLog {
  readonly calls: StubCall[] = [];
  readonly stubbed: readonly string[];
  private readonly offered: readonly BusinessTool[];
  private readonly changes = new WakeUp();
  /** Runs still waiting out their delay_ms, ended by close(): a side-effect run is never aborted by the call. */
  private readonly running = new Set<() => void>();

  constructor(stubs: Readonly<Record<string, ToolStub>>) {
    this.stubbed = Object.freeze(Object.keys(stubs));
    this.offered = Object.freeze(Object.entries(stubs).map(([name, stub]) => this.stubTool(name, stub)));
  }

  tools(): readonly BusinessTool[] {
    return this.offered;
  }

  until<T>(check: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
    return this.changes.until(check, timeoutMs);
  }

  /** Ends the runs still waiting, as aborted: no timer outlives the scenario. */
  close(): void {
    for (const end of [...this.running]) end();
  }

  private stubTool(name: string, stub: ToolStub): BusinessTool {
    const definition: ChatCompletionTool = {
      type: 'function',
      function: {
        name,
        description: stub.description ?? `The ${name} tool (a stand-in of a test scenario).`,
        parameters: stub.parameters ?? { type: 'object' },
      },
    };
    const result = resultOf(name, stub);
    return Object.freeze({
      name,
      definition,
      sideEffect: stub.side_effect,
      holdLines: Object.freeze([...stub.hold]),
      run: async (argumentsJson: string, context: ToolRunContext): Promise<ToolResult> => {
        const call: StubCall = { name, arguments: parsed(argumentsJson), startedAt: performance.now(), endedAt: undefined, outcome: undefined };
        this.calls.push(call);
        this.wake();
        const completed = await this.wait(stub.delay_ms ?? 0, context.signal);
        const outcome = completed ? result : ABORTED;
        call.endedAt = performance.now();
        call.outcome = outcome.outcome;
        this.wake();
        return outcome;
      },
    });
  }

  /** True once `ms` have passed; false if the run is aborted (or the scenario ends) first. */
  private wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const end = (completed: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        this.running.delete(stop);
        resolve(completed);
      };
      const aborted = (): void => end(false);
      const stop = (): void => end(false);
      const timer = setTimeout(() => end(true), ms);
      signal.addEventListener('abort', aborted, { once: true });
      this.running.add(stop);
    });
  }

  private wake(): void {
    this.changes.wake();
  }
}

/**
 * What the model reads, as a real tool would give it: `returns` as written
 * (text as is, other values as JSON), and a failure as `error: …`.
 */
function resultOf(name: string, stub: ToolStub): ToolResult {
  const given = stub.returns === undefined ? undefined : typeof stub.returns === 'string' ? stub.returns : JSON.stringify(stub.returns);
  if (stub.outcome === 'ok') return { content: given ?? 'done', outcome: 'ok' };
  const text = given ?? (stub.outcome === 'timeout' ? `${name} did not answer in time` : `${name} failed`);
  return { content: /^error\b/i.test(text) ? text : `error: ${text}`, outcome: stub.outcome };
}

function parsed(argumentsJson: string): unknown {
  if (argumentsJson.trim() === '') return {};
  try {
    return JSON.parse(argumentsJson) as unknown;
  } catch {
    return argumentsJson;
  }
}
