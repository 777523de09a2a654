/**
 * Hotline as production runs it: `node dist/main.js`, a process of its own (WORKERS=N: a primary
 * and N workers sharing its port), measured through process-probe.ts, which every process that
 * runs a Hotline preloads. Its environment is built from scratch and it runs in an empty folder,
 * so neither the shell's variables nor the project's .env reach it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { clockOffset } from './clock.js';
import {
  CommandChannel,
  shiftRecords,
  type HeapFigures,
  type HotlineUnderTest,
  type LoopFigures,
  type ProbeRecords,
} from './hotline-probes.js';
import { takeNice } from './priority.js';
import { stopChild } from './stop-child.js';
import { PROBE_PORT_VARIABLE, type ProcessProbeMessage } from './process-probe.js';

/**
 * The bench runs from source (tsx) and is never built: the Hotline it measures is dist/ at the
 * repository's root, which `npm run build` makes of src/ alone.
 */
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const sourceDir = path.join(repoRoot, 'src');
const distDir = path.join(repoRoot, 'dist');

/** Enough of the bench's environment to run node, and nothing that configures Hotline. */
const PASSED_ON = ['PATH', 'HOME', 'TMPDIR', 'LANG'];

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
/** The last output kept, to say why a process stopped. */
const TAIL_CHARS = 4_000;

/**
 * Builds dist/ as `npm run build` does: the process measured is the compiled JavaScript production
 * runs. Throws with tsc's output when the build fails.
 */
export async function buildHotline(): Promise<void> {
  const child = spawn('npm', ['run', 'build', '--silent'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (piece: string) => (output += piece));
  child.stderr.setEncoding('utf8').on('data', (piece: string) => (output += piece));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`npm run build failed (exit ${code}):\n${output.slice(-TAIL_CHARS)}`);
}

/**
 * Hotline from its TypeScript sources through tsx, for a test that cannot wait for a build: the
 * same entry point and probe, compiled as they load.
 */
function sourceArgs(): string[] {
  return ['--import', import.meta.resolve('tsx'), '--import', new URL('process-probe.ts', import.meta.url).href, path.join(sourceDir, 'main.ts')];
}

/**
 * process-probe.ts as JavaScript for `node dist/main.js`, in one file in `folder`: dist/ holds none
 * of the bench, and tsx in the measured process would load and compile differently from production.
 * The bench's own modules are bundled in; the product's are imported from dist/, the very modules
 * main.js runs, since the probe finds Hotline's registry by patching dist's CallRegistry class.
 */
async function builtProbe(folder: string, builtDir: string): Promise<string> {
  const outfile = path.join(folder, 'process-probe.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('process-probe.ts', import.meta.url))],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    plugins: [
      {
        name: 'the-product-from-dist',
        setup(builder) {
          builder.onResolve({ filter: /^\.\.?\// }, ({ path: specifier, resolveDir }) => {
            const target = path.resolve(resolveDir, specifier);
            if (!target.startsWith(sourceDir + path.sep)) return undefined;
            return { path: pathToFileURL(path.join(builtDir, path.relative(sourceDir, target))).href, external: true };
          });
        },
      },
    ],
  });
  return outfile;
}

/** One Hotline process's probe connection: its commands, and its clock against the bench's. */
class ProbeLink {
  readonly commands: CommandChannel;

  constructor(
    socket: Socket,
    readonly pid: number,
    /** Its time + shift = the bench's time. */
    readonly shift: number,
    readonly nice: number | undefined,
    lines: AsyncIterator<string>,
  ) {
    const commands = new CommandChannel((message) => socket.write(`${JSON.stringify(message)}\n`), `Hotline process ${pid}`);
    this.commands = commands;
    void (async () => {
      for (let next = await lines.next(); !next.done; next = await lines.next()) {
        const message = JSON.parse(next.value) as ProcessProbeMessage;
        if (message.kind !== 'ready') commands.settle(message);
      }
      commands.fail(new Error(`Hotline process ${pid} closed its probe connection`));
    })();
  }
}

/** Keeps the last `TAIL_CHARS` of a stream, and hands each line to `onLine`. */
function follow(stream: NodeJS.ReadableStream, onLine?: (line: string) => void): () => string {
  let tail = '';
  createInterface({ input: stream }).on('line', (line) => {
    tail = `${tail}${line}\n`.slice(-TAIL_CHARS);
    onLine?.(line);
  });
  return () => tail;
}

export class HotlineProcess implements HotlineUnderTest {
  private closing = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
    private readonly probeServer: Server,
    private readonly links: readonly ProbeLink[],
    /** The empty folder it runs in, removed by close(). */
    readonly workdir: string,
    readonly url: string,
    readonly wsUrl: string,
    readonly port: number,
  ) {}

  /**
   * `node --import process-probe.mjs dist/main.js` (see builtProbe) with `env` and WORKERS=`workers`, ready once
   * every Hotline in it has said where it listens and connected its probe. `nice`: the priority
   * the calling thread takes back first, as the process and every thread in it are born with it.
   * `source`: src/main.ts through tsx instead (see sourceArgs). `built`: the compiled product's folder,
   * laid out as src/ is (default dist/; the tests' own build is another).
   */
  static async start(
    env: Record<string, string>,
    options: { workers: number; nice: number | undefined; source?: boolean; built?: string },
  ): Promise<HotlineProcess> {
    const hotlines = options.workers;
    const probeServer = createServer();
    const links: ProbeLink[] = [];
    const linked = new Promise<void>((resolve) => {
      probeServer.on('connection', (socket) => {
        socket.setNoDelay(true);
        const lines = createInterface({ input: socket })[Symbol.asyncIterator]();
        void lines.next().then((first) => {
          if (first.done) return;
          const ready = JSON.parse(first.value) as ProcessProbeMessage;
          if (ready.kind !== 'ready') return;
          links.push(new ProbeLink(socket, ready.pid, clockOffset() - ready.clockOffset, ready.nice, lines));
          if (links.length === hotlines) resolve();
        });
      });
    });
    await new Promise<void>((resolve) => probeServer.listen(0, '127.0.0.1', resolve));
    const probePort = (probeServer.address() as { port: number }).port;

    const workdir = await mkdtemp(path.join(tmpdir(), 'hotline-bench-process-'));
    // HOTLINE_BENCH_CPU_PROFILE_DIR: each Hotline process writes a CPU profile there as it exits (finding where a figure goes).
    const profileDir = process.env.HOTLINE_BENCH_CPU_PROFILE_DIR;
    const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [];
    const built = options.built ?? distDir;
    const nodeArgs = [...profile, ...(options.source ? sourceArgs() : ['--import', pathToFileURL(await builtProbe(workdir, built)).href, path.join(built, 'main.js')])];
    const passed: Record<string, string> = {};
    for (const name of PASSED_ON) if (process.env[name] !== undefined) passed[name] = process.env[name];
    takeNice(options.nice);
    const child = spawn(
      process.execPath,
      nodeArgs,
      {
        cwd: workdir,
        env: { ...passed, ...env, WORKERS: String(hotlines), [PROBE_PORT_VARIABLE]: String(probePort) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let wsUrl: string | undefined;
    let listening = 0;
    let announced: () => void = () => undefined;
    const allListening = new Promise<void>((resolve) => (announced = resolve));
    // Each Hotline logs its addresses once it listens; the workers of one process share the port.
    const stdout = follow(child.stdout as NodeJS.ReadableStream, (line) => {
      const match = /"websocketUrl":"(ws:\/\/[^"]+)"/.exec(line);
      if (!match) return;
      wsUrl = match[1];
      if (++listening === hotlines) announced();
    });
    const stderr = follow(child.stderr as NodeJS.ReadableStream);
    const failed = (why: string): Error => new Error(`Hotline (WORKERS=${hotlines}) ${why}:\n${stdout()}${stderr()}`);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.all([allListening, linked]),
        exited.then(() => {
          throw failed(`exited with code ${child.exitCode ?? child.signalCode} while starting`);
        }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(failed(`was not ready after ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
        }),
      ]);
    } catch (error) {
      child.kill('SIGKILL');
      probeServer.close();
      await rm(workdir, { recursive: true, force: true });
      throw error;
    } finally {
      clearTimeout(timer);
    }
    const ws = new URL(wsUrl ?? '');
    const url = `http://${ws.host}`;
    const started = new HotlineProcess(child, exited, probeServer, links, workdir, url, ws.href, Number(ws.port));
    // A Hotline that dies under the bench says why, or its probe's closing would be all there is to read.
    void exited.then(() => {
      if (!started.closing) process.stderr.write(`${failed(`exited with code ${child.exitCode ?? child.signalCode} during the run`).message}\n`);
    });
    return started;
  }

  /** How many Hotlines run in the process (WORKERS). */
  get hotlines(): number {
    return this.links.length;
  }

  /** The primary of WORKERS (or the one process) and each Hotline. */
  get pids(): readonly number[] {
    const pids = this.links.map((link) => link.pid);
    return this.child.pid === undefined || pids.includes(this.child.pid) ? pids : [this.child.pid, ...pids];
  }

  /** The first Hotline's nice value: they are all born with it. */
  get nice(): number | undefined {
    return this.links[0]?.nice;
  }

  async startProbe(): Promise<void> {
    await Promise.all(this.links.map((link) => link.commands.call({ kind: 'probe-start' })));
  }

  /** Every Hotline's records, each moved onto the bench's clock. */
  async stopProbe(): Promise<ProbeRecords> {
    const all = await Promise.all(this.links.map(async (link) => shiftRecords(await link.commands.call<'probe-stop'>({ kind: 'probe-stop' }), link.shift)));
    return { speaks: all.flatMap((r) => r.speaks), bargeIns: all.flatMap((r) => r.bargeIns) };
  }

  async startLoopMonitor(): Promise<void> {
    await Promise.all(this.links.map((link) => link.commands.call({ kind: 'loop-start' })));
  }

  /** The worst event-loop delay of any Hotline in the process, and their mean utilisation. */
  async stopLoopMonitor(): Promise<LoopFigures> {
    const all = await Promise.all(this.links.map((link) => link.commands.call<'loop-stop'>({ kind: 'loop-stop' })));
    return {
      p50Ms: Math.max(...all.map((f) => f.p50Ms)),
      p99Ms: Math.max(...all.map((f) => f.p99Ms)),
      maxMs: Math.max(...all.map((f) => f.maxMs)),
      utilization: all.reduce((sum, f) => sum + f.utilization, 0) / all.length,
      gcPauseMaxMs: Math.max(...all.map((f) => f.gcPauseMaxMs ?? 0)),
      gcPauseTotalMs: all.reduce((sum, f) => sum + (f.gcPauseTotalMs ?? 0), 0),
      allocatedBytes: all.reduce((sum, f) => sum + (f.allocatedBytes ?? 0), 0),
      processCpuMs: all.reduce((sum, f) => sum + (f.processCpuMs ?? 0), 0),
    };
  }

  /** The Hotlines' figures added up (the primary of WORKERS, which holds no call, left out). */
  async settleHeap(): Promise<HeapFigures> {
    const all = await Promise.all(this.links.map((link) => link.commands.call<'settle-heap'>({ kind: 'settle-heap' })));
    return {
      rss: all.reduce((sum, f) => sum + f.rss, 0),
      heapUsed: all.reduce((sum, f) => sum + f.heapUsed, 0),
      external: all.reduce((sum, f) => sum + f.external, 0),
      gcExposed: all.every((f) => f.gcExposed),
    };
  }

  /** SIGTERM, as a service manager stops it; SIGKILL if it has not exited in time. */
  async close(): Promise<void> {
    this.closing = true;
    for (const link of this.links) link.commands.fail(new Error('Hotline process closed'));
    await stopChild(this.child, this.exited, STOP_TIMEOUT_MS);
    await new Promise<void>((resolve) => this.probeServer.close(() => resolve()));
    await rm(this.workdir, { recursive: true, force: true });
  }
}
