import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { definitionChars, MAX_OFFER_CHARS, MAX_OFFERED_TOOLS } from './tool-definition.js';
import { nameKey, reservedName } from './tool-names.js';

/** What the offer needs of a tool: a business tool, or what prompts:check knows of one. */
export interface OfferItem {
  readonly name: string;
  readonly definition: ChatCompletionTool;
  readonly source?: string;
}

export interface LeftOut<T extends OfferItem = OfferItem> {
  /** The tool left out. */
  readonly tool: T;
  readonly name: string;
  /** Where it comes from, if it says (a scenario's stub does not). */
  readonly source: string | undefined;
  readonly reason: string;
  /** The tool that has its name, when that is why. */
  readonly takenBy?: OfferItem;
}

/**
 * The business tools offered to the model, from sources in order of
 * precedence (a scenario's stubs, the tool files, each MCP server in the
 * order of mcp.yaml): names equal ignoring case are one tool, and the first
 * keeps it; none may take a name of Hotline's own; and the offer stays within
 * MAX_OFFERED_TOOLS and MAX_OFFER_CHARS, the later tools left out. Each tool
 * left out is said with why, for the log and prompts:check.
 */
export function assembleOffer<T extends OfferItem>(sources: readonly (readonly T[])[]): { offered: T[]; leftOut: LeftOut<T>[] } {
  const offered: T[] = [];
  const leftOut: LeftOut<T>[] = [];
  const owners = new Map<string, T>();
  let chars = 0;
  for (const tool of sources.flat()) {
    const { source } = tool;
    const out = (reason: string, takenBy?: OfferItem): void => void leftOut.push({ tool, name: tool.name, source, reason, ...(takenBy ? { takenBy } : {}) });
    const reserved = reservedName(tool.name);
    if (reserved !== undefined) {
      out(`"${tool.name}" is the name of Hotline's own ${reserved} tool, in any spelling`);
      continue;
    }
    const owner = owners.get(nameKey(tool.name));
    if (owner !== undefined) {
      out(`"${owner.name}"${owner.source ? ` of ${owner.source}` : ''} has that name (names are compared ignoring case)`, owner);
      continue;
    }
    if (offered.length >= MAX_OFFERED_TOOLS) {
      out(`more than ${MAX_OFFERED_TOOLS} tools would be offered`);
      continue;
    }
    const size = definitionChars(tool.definition);
    if (chars + size > MAX_OFFER_CHARS) {
      out(`the offer would be ${chars + size} characters of JSON in every request; at most ${MAX_OFFER_CHARS}`);
      continue;
    }
    chars += size;
    owners.set(nameKey(tool.name), tool);
    offered.push(tool);
  }
  return { offered, leftOut };
}

/** One line for the log and prompts:check: `tool "Transfer" of MCP server crm left out: …`. */
export function describeLeftOut(left: LeftOut): string {
  return `tool "${left.name}"${left.source ? ` of ${left.source}` : ''} left out: ${left.reason}`;
}
