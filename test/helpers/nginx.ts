/**
 * Debian's nginx in front of Hotline processes, run from the shipped `deploy/nginx.conf` with only
 * its addresses changed: the replicas' `hotline-N:3000` become this machine's ports, and its
 * `listen 80` a free port of loopback. Everything nginx writes (its pid, temp files, logs) goes to a
 * folder of its own, so tests run side by side. Absent nginx, `nginxPath()` is undefined and the
 * tests that need it are skipped, saying so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { firstExecutable } from '../../src/testing/first-executable.js';
import { repoRoot } from './child-process.js';
import { freePort } from './ports.js';

const CANDIDATES = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'];

export function nginxPath(): string | undefined {
  return firstExecutable(CANDIDATES);
}

export interface Nginx {
  /** http://127.0.0.1:port */
  readonly url: string;
  /** The status of every answer nginx gave, in order, from its access log. */
  statuses(): Promise<number[]>;
  /** Lines nginx logged at warn or above (upstream errors, retries on the next server). */
  errors(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * `deploy/nginx.conf` with `server hotline-N:3000` → `server 127.0.0.1:<ports[N-1]>` and
 * `listen 80` → `listen 127.0.0.1:<its own port>`: the file as shipped otherwise, every directive kept.
 */
export async function shippedConfWithPorts(backendPorts: readonly number[], listenPort: number): Promise<string> {
  const shipped = await readFile(path.join(repoRoot, 'deploy/nginx.conf'), 'utf8');
  let replaced = 0;
  const conf = shipped
    .replace(/server hotline-(\d+):3000/g, (_whole, n: string) => {
      replaced++;
      const port = backendPorts[Number(n) - 1];
      if (port === undefined) throw new Error(`deploy/nginx.conf names hotline-${n}, the test has ${backendPorts.length} backends`);
      return `server 127.0.0.1:${port}`;
    })
    .replace(/listen 80;/, `listen 127.0.0.1:${listenPort};`);
  if (replaced !== backendPorts.length) throw new Error(`deploy/nginx.conf names ${replaced} backends, the test has ${backendPorts.length}`);
  return conf;
}

/** Starts nginx on the shipped configuration in front of `backendPorts`; resolves once it answers. */
export async function startNginx(backendPorts: readonly number[]): Promise<Nginx> {
  const binary = nginxPath();
  if (!binary) throw new Error('nginx is not installed (Debian: apt-get install nginx-light)');
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-nginx-'));
  // nginx started as root runs its workers as nobody: they must reach the temp folders.
  await chmod(dir, 0o755);
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    await mkdir(path.join(dir, sub));
    await chmod(path.join(dir, sub), 0o777);
  }
  const port = await freePort();
  await writeFile(path.join(dir, 'hotline.conf'), await shippedConfWithPorts(backendPorts, port));
  await writeFile(
    path.join(dir, 'nginx.conf'),
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  log_format status '$status $request_method $request_uri $upstream_addr $upstream_status';
  access_log ${dir}/access.log status;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/hotline.conf;
}
`,
  );
  const child: ChildProcess = spawn(binary, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (piece: string) => (stderr += piece));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const giveUpAt = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx did not start: ${stderr}${await readFile(path.join(dir, 'error.log'), 'utf8').catch(() => '')}`);
    // Any answer, even a 502 from a backend not up yet, says nginx listens.
    const up = await fetch(`${url}/healthz`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (Date.now() > giveUpAt) throw new Error(`nginx did not answer on ${url}: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const lines = async (file: string): Promise<string[]> =>
    (await readFile(path.join(dir, file), 'utf8').catch(() => '')).split('\n').filter((line) => line.length > 0);
  return {
    url,
    async statuses() {
      return (await lines('access.log')).map((line) => Number(line.split(' ')[0]));
    },
    async errors() {
      return lines('error.log');
    },
    async close() {
      if (child.exitCode === null) {
        // QUIT: the workers finish what they carry, as `nginx -s quit` asks.
        child.kill('SIGQUIT');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
