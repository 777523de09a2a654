/**
 * The network phase (issue 24): what a caller pays when the model and the business system are
 * across a network, over TLS, as in production, rather than on loopback over plain HTTP.
 *
 * Hotline runs as a process (`node dist/main.js`, see hotline-process.ts) trusting the bench's
 * self-signed certificate as a user would (NODE_EXTRA_CA_CERTS), with a prompts folder holding one
 * business tool. The far side (far-side-main.ts: the scripted model and the business system, both
 * HTTPS) is a round trip away (network-link.ts: a network namespace with netem, else a delaying
 * proxy). A few calls talk with pauses of seconds between turns, as people do, so whatever Hotline
 * does with its connections while a call is quiet shows. Per turn: the time from the caller's
 * words to the first speak, above what a client of the bench's own needs for the same words over
 * the same link on connections it keeps warm (warm-client.ts, measured in the same run); and which
 * requests, to the model and to the business system, came on a connection opened for them.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMark, cpuSince } from './cpu.js';
import { cleanUpOnExit, killQuietly, removeQuietly } from './exit-cleanup.js';
import { FarSide } from './far-side.js';
import { buildHotline, HotlineProcess } from './hotline-process.js';
import { runCalls, type TurnRecord } from './network-calls.js';
import { networkFigures, type NetworkFigures } from './network-figures.js';
import { makeLink, type LinkKind, type NetworkLink } from './network-link.js';
import { networkTag, SHOP_URL_VARIABLE, TOOL_FILE, TOOL_NAME, type TurnKind } from './network-script.js';
import { makeSelfSigned, type SelfSigned } from '../src/testing/self-signed.js';
import { WarmClient, type WarmSample } from './warm-client.js';

export interface NetworkOptions {
  /** The link's round-trip time (ms). */
  rttMs: number;
  /** The caller's pause before each turn (ms), uniform in the range. */
  gapMs: { min: number; max: number };
  calls: number;
  turns: number;
  ttftMs: number;
  tokenDelayMs: number;
  msPerChar: number;
  seed: number;
  /** auto: the namespace where it can be made, else the proxy. */
  link: LinkKind | 'auto';
  /** How long the far side keeps an idle connection open (ms). */
  serverKeepAliveMs: number;
  /**
   * Whether the far side says so in a `Keep-Alive: timeout=…` header, as Node's servers do. Without
   * it (Cloudflare's front, in front of OpenAI's API, sends none) a client keeps a connection as
   * long as its own idle limit says.
   */
  keepAliveHint: boolean;
  /** Hotline from its sources through tsx instead of a build of dist/: for a test that cannot wait for tsc. */
  hotlineFromSource?: boolean;
  progress: (message: string) => void;
}

export interface NetworkResult extends NetworkFigures {
  note: string;
  link: { kind: LinkKind; description: string };
  rttMs: number;
  gapMs: { min: number; max: number };
  calls: number;
  turnsPerCall: number;
  serverKeepAliveMs: number;
  keepAliveHint: boolean;
  durationS: number;
  /** How busy the machine was while the calls ran (all cores, 0–1), and Hotline's share in cores: the figures' noise. */
  machineBusy: number;
  hotlineCores: number | undefined;
  loadAverage: number;
  /** The far side's nice value: below Hotline's, its timers keep time as another host's would. */
  farSideNice: number | undefined;
}

/** The warm client's pause between samples (or the callers' pause if shorter): its connections never idle long enough to be closed. */
const WARM_PAUSE_MS = 1_000;
/** At least this many warm samples of each kind, however short the calls are. */
const MIN_WARM_SAMPLES = 4;
/** Tags of the warm client's requests count down from here; the turns' count up from 0. */
const WARM_TAGS_FROM = 26 ** 4 - 1;
const TURN_TIMEOUT_MS = 30_000;

export function networkNote(link: LinkKind, fromSource: boolean): string {
  return (
    `Hotline as a process (${fromSource ? 'src/main.ts through tsx' : 'node dist/main.js'}, NODE_ENV=production) trusting ` +
    "the bench's self-signed certificate through NODE_EXTRA_CA_CERTS; the scripted model and a business system its tool calls, " +
    'both over HTTPS, across ' +
    (link === 'netns' ? 'a network namespace (netem)' : 'a delaying proxy') +
    '. Overhead = the caller\'s words sent → the first speak received, minus the far side\'s own time in that turn (the model ' +
    'to its first sentence, and in a tool turn to its tool call, the business system to its answer) and minus the rest a ' +
    'client of the bench\'s own needs for the same words over the same link on warm connections (p50 of its samples in this ' +
    'run, taken the same way): the link\'s round trips. New connection = a request on a connection that carried none ' +
    'before, counted by the server.'
  );
}

/** The repository's prompts with the one bench tool in place of the shipped ones. */
async function promptsFolder(under: string): Promise<string> {
  const repoPrompts = fileURLToPath(new URL('../prompts', import.meta.url));
  const folder = path.join(under, 'prompts');
  await cp(repoPrompts, folder, { recursive: true, filter: (source) => path.relative(repoPrompts, source).split(path.sep)[0] !== 'tools' });
  await mkdir(path.join(folder, 'tools'));
  await writeFile(path.join(folder, 'tools', `${TOOL_NAME}.yaml`), TOOL_FILE);
  return folder;
}

/** Runs `work` with cleanups pushed on the way, run in reverse when it ends, however it ends. */
async function withCleanups<T>(work: (defer: (cleanup: () => Promise<unknown>) => void) => Promise<T>): Promise<T> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    return await work((cleanup) => cleanups.push(cleanup));
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

/** Warm samples, alternating plain and tool turns, until `done` and at least MIN_WARM_SAMPLES of each. */
async function sampleWarm(client: WarmClient, done: Promise<unknown>, pauseMs: number) {
  let finished = false;
  void done.finally(() => (finished = true));
  const samples: WarmSample[] = [];
  const roundTrips: { ms: number; warm: boolean }[] = [];
  const count = (kind: TurnKind): number => samples.filter((s) => s.kind === kind).length;
  let tag = WARM_TAGS_FROM;
  while (!finished || count('plain') < MIN_WARM_SAMPLES || count('tool') < MIN_WARM_SAMPLES) {
    roundTrips.push(await client.roundTrip());
    const kind: TurnKind = samples.length % 2 === 0 ? 'plain' : 'tool';
    samples.push(await client.sample(kind, networkTag(tag--)));
    // A pause, not a loop at full speed: the model's load is the calls', the warm client only looks.
    await Promise.race([new Promise((resolve) => setTimeout(resolve, pauseMs)), done]);
  }
  return { samples, roundTrips };
}

export async function measureNetwork(options: NetworkOptions): Promise<NetworkResult> {
  if (!options.hotlineFromSource) {
    options.progress('network: building dist/ (npm run build)');
    await buildHotline();
  }
  return withCleanups(async (defer) => {
    const link: NetworkLink = await makeLink(options.rttMs, options.link);
    defer(() => link.close());
    options.progress(`network: ${link.kind === 'netns' ? 'network namespace' : 'delaying proxy'}, ${options.rttMs} ms round trip (${link.description})`);

    const tls: SelfSigned = await makeSelfSigned([...new Set([link.listenHost, '127.0.0.1'])]);
    const forgetTls = cleanUpOnExit(() => removeQuietly(tls.dir));
    defer(async () => {
      await tls.remove();
      forgetTls();
    });
    const farSide = await FarSide.start(
      {
        host: link.listenHost,
        keyFile: tls.keyFile,
        certFile: tls.certFile,
        ttftMs: options.ttftMs,
        tokenDelayMs: options.tokenDelayMs,
        keepAliveMs: options.serverKeepAliveMs,
        keepAliveHint: options.keepAliveHint,
      },
      link.prefix,
    );
    const forgetFarSide = cleanUpOnExit(() => killQuietly(farSide.pid));
    defer(async () => {
      await farSide.close();
      forgetFarSide();
    });
    const model = await link.reach(farSide.modelPort);
    const business = await link.reach(farSide.businessPort);

    const workdir = await mkdtemp(path.join(tmpdir(), 'hotline-bench-network-'));
    const forgetWorkdir = cleanUpOnExit(() => removeQuietly(workdir));
    defer(async () => {
      await rm(workdir, { recursive: true, force: true });
      forgetWorkdir();
    });
    const promptsDir = await promptsFolder(workdir);
    const transcriptsDir = path.join(workdir, 'transcripts');
    await mkdir(transcriptsDir);
    const hotline = await HotlineProcess.start(
      {
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        HOST: '127.0.0.1',
        PORT: '0',
        OPENAI_API_KEY: 'bench',
        OPENAI_BASE_URL: `https://${model.host}:${model.port}/v1`,
        LLM_MODEL: 'bench-model',
        NODE_EXTRA_CA_CERTS: tls.certFile,
        PROMPTS_DIR: promptsDir,
        TRANSCRIPTS_DIR: transcriptsDir,
        [SHOP_URL_VARIABLE]: `https://${business.host}:${business.port}`,
        // Started right before the calls, its check's connection would serve their first turns: production starts long before.
        LLM_CHECK_AT_START: 'false',
        // Reports ask the model after each call: requests that are not the turns measured here.
        REPORT_FIELDS: 'false',
        RATE_LIMIT_WEBHOOK_PER_MINUTE: '0',
        RATE_LIMIT_WS_PER_MINUTE: '0',
        SHUTDOWN_GRACE_MS: '2000',
      },
      { workers: 1, nice: undefined, source: options.hotlineFromSource ?? false },
    );
    const forgetHotline = cleanUpOnExit(() => {
      hotline.pids.forEach((pid) => killQuietly(pid));
      removeQuietly(hotline.workdir);
    });
    defer(async () => {
      await hotline.close();
      forgetHotline();
    });

    const warm = new WarmClient(model, business, tls.cert);
    defer(async () => warm.close());
    await warm.warm();

    const gap = options.gapMs.min === options.gapMs.max ? `${options.gapMs.min / 1000} s` : `${options.gapMs.min / 1000}–${options.gapMs.max / 1000} s`;
    options.progress(`network: ${options.calls} calls × ${options.turns} turns, ${gap} between turns`);
    const loadAverage = os.loadavg()[0] ?? Number.NaN;
    const mark = cpuMark(hotline.pids);
    const started = performance.now();
    const calls = runCalls(hotline.wsUrl, {
      calls: options.calls,
      turns: options.turns,
      gapMs: options.gapMs,
      msPerChar: options.msPerChar,
      seed: options.seed,
      turnTimeoutMs: TURN_TIMEOUT_MS,
    });
    const [turns, warmed] = await Promise.all([calls, sampleWarm(warm, calls.catch(() => undefined), Math.min(WARM_PAUSE_MS, options.gapMs.min))]);
    const durationS = (performance.now() - started) / 1000;
    const cpu = cpuSince(mark);

    // Every request has ended before its turn's last speak; the far side's reports of them are in once it has exited.
    await hotline.close();
    await farSide.close();
    return {
      note: networkNote(link.kind, options.hotlineFromSource ?? false),
      link: { kind: link.kind, description: link.description },
      rttMs: options.rttMs,
      gapMs: options.gapMs,
      calls: options.calls,
      turnsPerCall: options.turns,
      serverKeepAliveMs: options.serverKeepAliveMs,
      keepAliveHint: options.keepAliveHint,
      durationS,
      machineBusy: cpu.machineBusy,
      hotlineCores: cpu.hotlineCores,
      loadAverage,
      farSideNice: farSide.nice,
      ...figuresOf(turns, farSide, warmed),
    };
  });
}

function figuresOf(turns: TurnRecord[], farSide: FarSide, warmed: Awaited<ReturnType<typeof sampleWarm>>): NetworkFigures {
  return networkFigures({
    turns,
    model: farSide.modelRequests,
    business: farSide.businessRequests,
    warm: warmed.samples,
    roundTrips: warmed.roundTrips,
    shift: farSide.shift,
  });
}
