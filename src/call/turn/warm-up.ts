import type { Llm } from '../../llm/llm.js';
import type { BusinessConnections, BusinessTool } from '../ports/business-tools.js';

/**
 * The connections a call's next turn will need — the model's, its business systems' — opened
 * while the caller may soon be answered (the call began, they started speaking, a line has played)
 * if none is idle, so no turn waits for a handshake; and given up once the turn's requests are made.
 */
export class ConnectionWarmup {
  constructor(
    /** Whose wish it is (the call): one wish per holder. */
    private readonly holder: object,
    private readonly llm: Llm,
    private readonly systems: BusinessConnections | undefined,
    /** The business tools on offer now: each one's origin is a system a turn may call. */
    private readonly offered: () => readonly BusinessTool[],
  ) {}

  expect(): void {
    this.llm.expect?.(this.holder);
    const { systems } = this;
    if (!systems) return;
    for (const tool of this.offered()) if (tool.origin) systems.expect(this.holder, tool.origin);
  }

  /** The call's requests are made now, or it makes none any more: it waits for no connection. */
  spent(): void {
    this.llm.spent?.(this.holder);
    this.systems?.spent(this.holder);
  }
}
