import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnHotline, type HotlineProcess } from './child-process.js';

export interface StartedReplica {
  readonly child: HotlineProcess;
  /** http://127.0.0.1:port */
  readonly url: string;
  readonly wsUrl: string;
  /** Where the other replicas reach it (its internal listener): only with CLUSTER_SECRET. */
  readonly internalUrl: string | undefined;
}

/**
 * A Hotline process as one replica (`env` names its REPLICA_ID and store): a transcripts folder of
 * its own, as each pod has its own disk, both removed and the process killed by `cleanups`.
 */
export async function startReplica(env: Record<string, string>, cleanups: (() => Promise<unknown> | unknown)[]): Promise<StartedReplica> {
  const transcripts = mkdtempSync(path.join(tmpdir(), `hotline-${env.REPLICA_ID ?? 'replica'}-`));
  cleanups.push(() => rm(transcripts, { recursive: true, force: true }));
  const child = spawnHotline({ ...env, TRANSCRIPTS_DIR: transcripts });
  cleanups.push(() => {
    if (child.child.exitCode === null) child.child.kill('SIGKILL');
  });
  const started = await child.line(/"websocketUrl":"(ws:\/\/[^"]+)"/);
  const wsUrl = started[1];
  const internalUrl = /"internalUrl":"(http:\/\/[^"]+)"/.exec(started.input)?.[1];
  return { child, url: wsUrl!.replace(/^ws/, 'http').replace(/\/ws$/, ''), wsUrl: wsUrl!, internalUrl };
}

/**
 * A replica's environment for webhook tests against a scripted model: its store (`place`), its id,
 * the model at `llmUrl`, and each reply as one speak (WEBHOOK_REPLY=whole), no report fields asked for.
 */
export function scriptedReplicaEnv(place: { env: Record<string, string> }, llmUrl: string, id: string): Record<string, string> {
  return {
    ...place.env,
    REPLICA_ID: id,
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: llmUrl,
    LLM_MODEL: 'test-model',
    REPORT_FIELDS: 'false',
    WEBHOOK_REPLY: 'whole',
    // The scripts answer the caller's words as said; replicas sharing one index are tested in knowledge.test.ts.
    KNOWLEDGE: 'false',
    // Calls stay in the shipped prompts' own language and send nothing but the spec's actions; the language tests turn both on.
    LANGUAGES: 'false',
    CONFIGURE_TRANSCRIPTION: 'false',
  };
}

/**
 * A replica's environment for campaign tests against a scripted model: its store (`place`), its id,
 * the cluster's secret, the voice service's API at `serviceUrl` with an access token of its own (the
 * service tells by it which replica asked for a call), no mailbox detection, no report fields.
 */
export function campaignReplicaEnv(
  place: { env: Record<string, string> },
  id: string,
  parts: { adminToken: string; serviceUrl: string; llmUrl: string },
): Record<string, string> {
  return {
    ...place.env,
    REPLICA_ID: id,
    CLUSTER_SECRET: 'cluster-secret-of-the-test-1',
    ADMIN_TOKEN: parts.adminToken,
    AIFLOW_API_URL: parts.serviceUrl,
    AIFLOW_ACCESS_TOKEN: `token-${id}`,
    AIFLOW_ID: 'flow-1',
    AIFLOW_BILLING_DEVICE: 'dev-1',
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: parts.llmUrl,
    LLM_MODEL: 'test-model',
    VOICEMAIL_DETECTION: 'false',
    REPORT_FIELDS: 'false',
    KNOWLEDGE: 'false',
    // Calls stay in the shipped prompts' own language and send nothing but the spec's actions; the language tests turn both on.
    LANGUAGES: 'false',
    CONFIGURE_TRANSCRIPTION: 'false',
  };
}
