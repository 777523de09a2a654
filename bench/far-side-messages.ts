/**
 * What the network phase's far side (far-side-main.ts, a process of its own, inside the network
 * namespace when there is one) is told when it starts, and what it reports back over its IPC
 * channel: each request its model and its business system served, on its own clock.
 */
import type { ModelRole } from './network-script.js';

export const FAR_SIDE_CONFIG_VARIABLE = 'HOTLINE_BENCH_FAR_SIDE';

export interface FarSideConfig {
  /** The address both servers listen on. */
  host: string;
  keyFile: string;
  certFile: string;
  ttftMs: number;
  tokenDelayMs: number;
  /** How long an idle connection is kept open by both servers. */
  keepAliveMs: number;
  /** Whether they say so in a `Keep-Alive: timeout=…` header. */
  keepAliveHint: boolean;
}

export interface ModelRequestRecord {
  kind: 'model';
  role: ModelRole;
  tag: string | undefined;
  toolOffered: boolean;
  /** Requests its connection had carried before: 0 on a connection opened for it. */
  connectionRequests: number;
  /** The request's headers were read (its handler started). */
  receivedAt: number;
  /** The first token written; undefined when none was (a tool call writes argument pieces). */
  firstTokenAt: number | undefined;
  /** The token completing the answer's first sentence written: the moment Hotline could speak, as far as the model decides. */
  firstSentenceAt: number | undefined;
  /** The response was handed to the kernel whole, or the client went away. */
  endedAt: number;
  outcome: string;
}

export interface BusinessRequestRecord {
  kind: 'business';
  tag: string | undefined;
  connectionRequests: number;
  receivedAt: number;
  answeredAt: number;
}

export type FarSideMessage =
  | { kind: 'ready'; modelPort: number; businessPort: number; clockOffset: number; nice: number | undefined }
  | ModelRequestRecord
  | BusinessRequestRecord;
