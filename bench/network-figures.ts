/**
 * The network phase's figures, from what the callers saw, what the far side recorded of each
 * request and the warm client's baseline. Pure, so they can be checked on made-up records.
 */
import type { BusinessRequestRecord, ModelRequestRecord } from './far-side-messages.js';
import type { TurnRecord } from './network-calls.js';
import type { TurnKind } from './network-script.js';
import { percentile } from './stats.js';
import type { WarmSample } from './warm-client.js';

/** The issue asks for p50, p95 and the worst. */
export interface Spread {
  count: number;
  p50: number;
  p95: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = Float64Array.from(values.filter(Number.isFinite)).sort();
  return { count: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.length > 0 ? (sorted.at(-1) ?? Number.NaN) : Number.NaN };
}

export interface NetworkBaseline {
  /** The link's round trip as a warm client sees it: the business system's answer on a kept connection. */
  roundTripMs: Spread;
  /** A plain turn's chat request: sent → first token, sent → the token completing the first sentence. */
  plainFirstTokenMs: Spread;
  plainFirstSentenceMs: Spread;
  /** A tool turn: the model's tool call, the business system, the model's answer to its first sentence. */
  toolFirstSentenceMs: Spread;
  /** Samples left out because a connection of the warm client had to be opened again. */
  coldSamples: number;
}

export interface TurnGroup {
  turns: number;
  /** Words sent → first speak received, minus the warm client's time for the same words (p50 of its kind). */
  overheadMs: Spread;
  /** Words sent → the turn's first model request arrived at the model (the link's half round trip included). */
  requestArrivedMs: Spread;
  /** Turns with a model request on a connection that carried none before. */
  turnsOnNewConnection: number;
  modelRequests: number;
  modelRequestsOnNewConnection: number;
}

export interface BusinessGroup {
  requests: number;
  requestsOnNewConnection: number;
  /** The model's tool call written whole → the business request arrived, minus one warm round trip. */
  delayMs: Spread;
}

export interface NetworkTurns {
  /** A call's first turn. */
  first: TurnGroup;
  later: TurnGroup;
  byKind: Record<TurnKind, { first: TurnGroup; later: TurnGroup }>;
}

/** One turn as it went, all times in ms from the caller's words being sent: for reading a figure's outliers. */
export interface TurnTimeline {
  call: number;
  turn: number;
  kind: TurnKind;
  firstSpeakMs: number | undefined;
  overheadMs: number | undefined;
  /** What the far side took: the model to its tool call or first sentence, the business system to its answer. */
  serviceMs: number;
  /** Each request to the model or the business system: on a new connection, arrived, first token written, ended (model) or answered (business). */
  requests: { to: 'model' | 'business'; role: string; newConnection: boolean; arrivedMs: number; firstTokenMs?: number; endedMs: number }[];
}

export interface NetworkFigures {
  baseline: NetworkBaseline;
  turns: NetworkTurns;
  perTurn: TurnTimeline[];
  /** The business system's requests: a call's first tool turn, and its later ones. */
  business: { first: BusinessGroup; later: BusinessGroup };
  timedOut: number;
  /** Untagged speaks during turns: hold lines or fillers. */
  otherSpeaks: number;
  /** Tool turns in which the model never called the tool (it was not offered): the bench's setup is broken. */
  toolTurnsWithoutCall: number;
}

export interface FigureInputs {
  turns: readonly TurnRecord[];
  model: readonly ModelRequestRecord[];
  business: readonly BusinessRequestRecord[];
  warm: readonly WarmSample[];
  roundTrips: readonly { ms: number; warm: boolean }[];
  /** The far side's time + shift = the callers' time. */
  shift: number;
}

export function networkFigures(inputs: FigureInputs): NetworkFigures {
  const warm = inputs.warm.filter((sample) => sample.warm);
  const plain = warm.filter((sample) => sample.kind === 'plain');
  const tool = warm.filter((sample) => sample.kind === 'tool');
  const baseline: NetworkBaseline = {
    roundTripMs: spread(inputs.roundTrips.filter((trip) => trip.warm).map((trip) => trip.ms)),
    plainFirstTokenMs: spread(plain.map((sample) => sample.firstTokenMs)),
    plainFirstSentenceMs: spread(plain.map((sample) => sample.firstSentenceMs)),
    toolFirstSentenceMs: spread(tool.map((sample) => sample.firstSentenceMs)),
    coldSamples: inputs.warm.length - warm.length + inputs.roundTrips.filter((trip) => !trip.warm).length,
  };
  const modelByTag = groupBy(inputs.model.filter((r) => r.role !== 'untraced'), (r) => r.tag);
  const businessByTag = groupBy(inputs.business, (r) => r.tag);
  const serviceOf = (tag: string): number => serviceMs(modelByTag.get(tag) ?? [], businessByTag.get(tag) ?? []);
  // The warm client's own share: its time for the words less what the far side took to answer them.
  const warmShare = (kind: TurnKind): number => spread((kind === 'plain' ? plain : tool).map((sample) => sample.firstSentenceMs - serviceOf(sample.tag))).p50;
  const expected: Record<TurnKind, number> = { plain: warmShare('plain'), tool: warmShare('tool') };
  /** Words sent → first speak, less the far side's time in this very turn and the warm client's share: Hotline's own. */
  const overheadOf = (turn: TurnRecord): number | undefined =>
    turn.firstSpeakAt === undefined ? undefined : turn.firstSpeakAt - turn.sentAt - serviceOf(turn.tag) - expected[turn.kind];

  const group = (turns: readonly TurnRecord[]): TurnGroup => {
    const overheads: number[] = [];
    const arrivals: number[] = [];
    let onNew = 0;
    let requests = 0;
    let requestsOnNew = 0;
    for (const turn of turns) {
      const overhead = overheadOf(turn);
      if (overhead !== undefined) overheads.push(overhead);
      const made = modelByTag.get(turn.tag) ?? [];
      requests += made.length;
      const fresh = made.filter((r) => r.connectionRequests === 0).length;
      requestsOnNew += fresh;
      if (fresh > 0) onNew++;
      const first = Math.min(...made.map((r) => r.receivedAt));
      if (Number.isFinite(first)) arrivals.push(first + inputs.shift - turn.sentAt);
    }
    return { turns: turns.length, overheadMs: spread(overheads), requestArrivedMs: spread(arrivals), turnsOnNewConnection: onNew, modelRequests: requests, modelRequestsOnNewConnection: requestsOnNew };
  };
  const firstOf = (turns: readonly TurnRecord[]): TurnRecord[] => turns.filter((t) => t.turn === 0);
  const laterOf = (turns: readonly TurnRecord[]): TurnRecord[] => turns.filter((t) => t.turn > 0);
  const ofKind = (kind: TurnKind): TurnRecord[] => inputs.turns.filter((t) => t.kind === kind);

  const roundTrip = baseline.roundTripMs.p50;
  const businessGroup = (turns: readonly TurnRecord[]): BusinessGroup => {
    let requests = 0;
    let onNew = 0;
    const delays: number[] = [];
    for (const turn of turns) {
      const call = (modelByTag.get(turn.tag) ?? []).find((r) => r.role === 'tool-call');
      for (const request of businessByTag.get(turn.tag) ?? []) {
        requests++;
        if (request.connectionRequests === 0) onNew++;
        if (call) delays.push(request.receivedAt - call.endedAt - roundTrip);
      }
    }
    return { requests, requestsOnNewConnection: onNew, delayMs: spread(delays) };
  };
  const toolTurns = ofKind('tool');
  const firstToolTurns = new Set<TurnRecord>();
  for (const turn of [...toolTurns].sort((a, b) => a.turn - b.turn)) {
    if (![...firstToolTurns].some((seen) => seen.call === turn.call)) firstToolTurns.add(turn);
  }

  const since = (turn: TurnRecord, at: number): number => at + inputs.shift - turn.sentAt;
  const perTurn = inputs.turns.map((turn): TurnTimeline => ({
    call: turn.call,
    turn: turn.turn,
    kind: turn.kind,
    firstSpeakMs: turn.firstSpeakAt === undefined ? undefined : turn.firstSpeakAt - turn.sentAt,
    overheadMs: overheadOf(turn),
    serviceMs: serviceOf(turn.tag),
    requests: [
      ...(modelByTag.get(turn.tag) ?? []).map((r) => ({
        to: 'model' as const,
        role: r.role,
        newConnection: r.connectionRequests === 0,
        arrivedMs: since(turn, r.receivedAt),
        ...(r.firstTokenAt === undefined ? {} : { firstTokenMs: since(turn, r.firstTokenAt) }),
        endedMs: since(turn, r.endedAt),
      })),
      ...(businessByTag.get(turn.tag) ?? []).map((r) => ({
        to: 'business' as const,
        role: 'lookup',
        newConnection: r.connectionRequests === 0,
        arrivedMs: since(turn, r.receivedAt),
        endedMs: since(turn, r.answeredAt),
      })),
    ].sort((a, b) => a.arrivedMs - b.arrivedMs),
  }));

  return {
    baseline,
    perTurn,
    turns: {
      first: group(firstOf(inputs.turns)),
      later: group(laterOf(inputs.turns)),
      byKind: {
        plain: { first: group(firstOf(ofKind('plain'))), later: group(laterOf(ofKind('plain'))) },
        tool: { first: group(firstOf(toolTurns)), later: group(laterOf(toolTurns)) },
      },
    },
    business: {
      first: businessGroup([...firstToolTurns]),
      later: businessGroup(toolTurns.filter((turn) => !firstToolTurns.has(turn))),
    },
    timedOut: inputs.turns.filter((t) => t.timedOut).length,
    otherSpeaks: inputs.turns.reduce((sum, t) => sum + t.otherSpeaks, 0),
    toolTurnsWithoutCall: toolTurns.filter((turn) => !(modelByTag.get(turn.tag) ?? []).some((r) => r.role === 'tool-call')).length,
  };
}

/**
 * The far side's own time in one turn's (or warm sample's) requests: the model to its tool call
 * written whole or to the token completing its first sentence, the business system to its answer.
 * The model's timers wander by a millisecond or two from request to request; taken out per turn,
 * that is not counted as Hotline's. NaN when a record it needs is missing.
 */
export function serviceMs(model: readonly ModelRequestRecord[], business: readonly BusinessRequestRecord[]): number {
  let total = 0;
  const call = model.find((r) => r.role === 'tool-call');
  if (call) total += call.endedAt - call.receivedAt;
  const answer = model.find((r) => r.role !== 'tool-call');
  total += (answer?.firstSentenceAt ?? Number.NaN) - (answer?.receivedAt ?? Number.NaN);
  for (const request of business) total += request.answeredAt - request.receivedAt;
  return total;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string | undefined): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === undefined) continue;
    groups.set(k, [...(groups.get(k) ?? []), item]);
  }
  return groups;
}
