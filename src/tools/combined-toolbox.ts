import type { BusinessTool, ToolBox } from '../call/ports/business-tools.js';
import type { Logger } from '../logger.js';
import { RESERVED_TOOL_NAMES } from './tool-file.js';

/** Names the call core keeps for itself. */
const RESERVED = new Set(RESERVED_TOOL_NAMES);

/**
 * The tools of several sources offered as one: the tool files first, then
 * each MCP server's. A name offered twice keeps its first tool — the model
 * must never be unsure which one it calls — and the clash is logged once.
 */
export function combineToolBoxes(sources: readonly ToolBox[], logger: Logger): ToolBox {
  const reported = new Set<string>();
  let lastInputs: (readonly BusinessTool[])[] = [];
  let lastOutput: readonly BusinessTool[] = [];
  return {
    tools(): readonly BusinessTool[] {
      const inputs = sources.map((source) => source.tools());
      // Asked at every turn: an unchanged offer is the very same array, built once.
      if (inputs.length === lastInputs.length && inputs.every((tools, i) => tools === lastInputs[i])) return lastOutput;
      const byName = new Map<string, BusinessTool>();
      for (const tool of inputs.flat()) {
        const taken = byName.has(tool.name) || RESERVED.has(tool.name);
        if (!taken) {
          byName.set(tool.name, tool);
          continue;
        }
        if (reported.has(tool.name)) continue;
        reported.add(tool.name);
        logger.warn({ tool: tool.name }, 'two tools share a name; only the first is offered');
      }
      lastInputs = inputs;
      lastOutput = Object.freeze([...byName.values()]);
      return lastOutput;
    },
  };
}
