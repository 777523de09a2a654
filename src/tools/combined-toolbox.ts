import type { BusinessTool, ToolBox } from '../call/ports/business-tools.js';
import type { Logger } from '../logger.js';
import { assembleOffer, describeLeftOut } from './tool-offer.js';

export interface CombineOptions {
  /** Hotline's own business-tool-shaped tools (the campaigns' do_not_call): offered as they are, after the rest. */
  readonly builtins?: readonly ToolBox[];
  /**
   * A scenario's stubs: first, and meant to replace the tool files of the
   * same names, so that is not logged as a clash. They take no built-in name either.
   */
  readonly stubs?: ToolBox;
}

/**
 * The tools of several sources offered as one (see assembleOffer): the tool
 * files first, then each MCP server's, then Hotline's own. What is left out
 * is logged once per change of the offer.
 */
export function combineToolBoxes(sources: readonly ToolBox[], logger: Logger, options: CombineOptions = {}): ToolBox {
  const boxes = [...(options.stubs ? [options.stubs] : []), ...sources];
  const builtins = options.builtins ?? [];
  let lastReported = '';
  let lastInputs: (readonly BusinessTool[])[] = [];
  let lastOutput: readonly BusinessTool[] = [];
  return {
    tools(): readonly BusinessTool[] {
      const inputs = [...boxes, ...builtins].map((source) => source.tools());
      // Asked at every turn: an unchanged offer is the very same array, built once.
      if (inputs.length === lastInputs.length && inputs.every((tools, i) => tools === lastInputs[i])) return lastOutput;
      const { offered, leftOut } = assembleOffer(inputs.slice(0, boxes.length));
      const stubs = new Set<unknown>(options.stubs ? inputs[0] : []);
      const report = leftOut.filter((left) => !stubs.has(left.takenBy)).map(describeLeftOut);
      if (report.length > 0 && report.join('\n') !== lastReported) logger.warn({ leftOut: report }, 'tools left out of the offer');
      lastReported = report.join('\n');
      lastInputs = inputs;
      lastOutput = Object.freeze([...offered, ...inputs.slice(boxes.length).flat()]);
      return lastOutput;
    },
  };
}
