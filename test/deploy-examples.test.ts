/**
 * The deployment examples (deploy/): parsed as their tools would, and each replica's environment
 * given to Hotline's own configuration as production would see it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { loadConfig } from '../src/config.js';
import { repoRoot } from './helpers/child-process.js';

const read = (name: string) => readFile(path.join(repoRoot, 'deploy', name), 'utf8');
/** What an operator passes in (compose's ${NAME:?…}, the Kubernetes Secret): sample values of the right shape. */
const SECRETS: Record<string, string> = {
  OPENAI_API_KEY: 'sk-example-key-0123456789',
  WEBHOOK_SECRET: 'webhook-secret-0123456789abcdef',
  WS_TOKEN: 'ws-token-0123456789abcdefghijkl',
  CLUSTER_SECRET: 'cluster-secret-0123456789abcdef',
  ADMIN_TOKEN: 'admin-token-0123456789abcdefghij',
  DATABASE_URL: 'postgres://hotline:secret@db.example.com:5432/hotline',
};

type Env = Record<string, string>;

describe('deploy/compose.yaml with nginx', () => {
  test('three replicas of one image on one PostgreSQL, each its own REPLICA_ID and INTERNAL_URL, one CLUSTER_SECRET; each environment starts Hotline in production', async () => {
    const compose = parse(await read('compose.yaml'), { merge: true }) as {
      services: Record<string, { environment?: Env; build?: string; image?: string; stop_grace_period?: string; networks?: string[] | Record<string, { ipv4_address?: string }> }>;
      networks?: Record<string, { ipam?: { config?: { subnet?: string }[] } }>;
    };
    const replicas = Object.entries(compose.services).filter(([name]) => name.startsWith('hotline-'));
    expect(replicas.map(([name]) => name)).toEqual(['hotline-1', 'hotline-2', 'hotline-3']);
    const envs = replicas.map(([, service]) => {
      const env: Env = {};
      for (const [name, value] of Object.entries(service.environment ?? {})) env[name] = String(value).replace(/\$\{(\w+):\?[^}]*\}/g, (_, v: string) => SECRETS[v] ?? '');
      return env;
    });
    expect(new Set(envs.map((e) => e.REPLICA_ID)).size).toBe(3);
    const nginxAddress = Object.values(compose.services.nginx!.networks as Record<string, { ipv4_address?: string }>)[0]?.ipv4_address ?? 'none';
    expect(envs.map((e) => e.INTERNAL_URL)).toEqual(['http://hotline-1:3001', 'http://hotline-2:3001', 'http://hotline-3:3001']);
    for (const env of envs) {
      expect(env.DATABASE_URL).toBe(envs[0]!.DATABASE_URL);
      expect(env.CLUSTER_SECRET).toBe(SECRETS.CLUSTER_SECRET);
      const config = loadConfig({ NODE_ENV: 'production', ...env });
      expect(config.databaseUrl).toMatch(/^postgres:\/\/hotline:hotline@postgres:5432\/hotline$/);
      expect(config.replica).toEqual({ id: env.REPLICA_ID, internalUrl: env.INTERNAL_URL, internalPort: 3001, clusterSecret: SECRETS.CLUSTER_SECRET });
      // X-Forwarded-For (and identity headers) are believed from nginx's own fixed address alone.
      expect(config.trustProxy).toEqual([nginxAddress]);
    }
    // That address is nginx's on a network of its own, which only nginx and the replicas join: no other
    // container (PostgreSQL here) reaches a replica from an address TRUST_PROXY names.
    const edge = Object.entries(compose.services.nginx!.networks as Record<string, { ipv4_address?: string }>);
    expect(edge).toHaveLength(1);
    const [edgeName] = edge[0]!;
    expect(compose.networks?.[edgeName]?.ipam?.config?.[0]?.subnet).toBe(`${nginxAddress.split('.').slice(0, 3).join('.')}.0/24`);
    const onEdge = Object.entries(compose.services)
      .filter(([, service]) => (Array.isArray(service.networks) ? service.networks : Object.keys(service.networks ?? {})).includes(edgeName))
      .map(([name]) => name);
    expect(onEdge.sort()).toEqual(['hotline-1', 'hotline-2', 'hotline-3', 'nginx']);
    // Longer than the calls' grace at shutdown (30 s), or Docker kills a replica mid-call.
    const grace = Number.parseInt(replicas[0]![1].stop_grace_period ?? '0', 10);
    expect(grace * 1000).toBeGreaterThan(loadConfig({}).limits.shutdownGraceMs);
  });

  test('nginx balances over all three, upgrades WebSockets, and keeps /internal/ to the replicas', async () => {
    const conf = await read('nginx.conf');
    for (const n of [1, 2, 3]) expect(conf).toContain(`server hotline-${n}:3000`);
    expect(conf).toMatch(/proxy_set_header Upgrade \$http_upgrade;/);
    expect(conf).toMatch(/location \/internal\/ \{\s*return 404;/);
    // The webhook's POSTs that reached no replica go to the next one (a replica stopping, or closing an idle connection).
    expect(conf).toMatch(/location = \/webhook \{[^}]*proxy_next_upstream error timeout non_idempotent;/);
    const directives = conf.replace(/#.*$/gm, '');
    expect(directives).not.toMatch(/\bip_hash\b|\bsticky\b|\bhash\b/);
  });
});

describe('deploy/kubernetes.yaml', () => {
  test('a Deployment with readiness on /readyz, a preStop pause and a grace period longer than the calls\', REPLICA_ID from the pod, and an environment Hotline takes in production', async () => {
    const docs = parseAllDocuments(await read('kubernetes.yaml')).map((d) => d.toJS() as { kind: string; spec: Record<string, unknown> });
    expect(docs.map((d) => d.kind)).toEqual(['Deployment', 'Service']);
    const spec = docs[0]!.spec as {
      replicas: number;
      template: {
        spec: {
          terminationGracePeriodSeconds: number;
          containers: {
            env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
            readinessProbe: { httpGet: { path: string } };
            livenessProbe: { httpGet: { path: string; port: number } };
            lifecycle: { preStop: { sleep: { seconds: number } } };
          }[];
        };
      };
    };
    expect(spec.replicas).toBeGreaterThan(1);
    const pod = spec.template.spec;
    const [container] = pod.containers;
    expect(container!.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container!.livenessProbe.httpGet.path).toBe('/healthz');
    const preStop = container!.lifecycle.preStop.sleep.seconds;
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStop * 1000 + loadConfig({}).limits.shutdownGraceMs);
    const env: Env = { ...SECRETS, NODE_ENV: 'production' };
    const pod1 = { 'metadata.name': 'hotline-7d9f-abcde', 'status.podIP': '10.1.2.3' };
    for (const variable of container!.env) {
      const field = variable.valueFrom?.fieldRef?.fieldPath as keyof typeof pod1 | undefined;
      env[variable.name] = field ? pod1[field] : (variable.value ?? '').replace(/\$\((\w+)\)/g, (_, v: string) => env[v] ?? '');
    }
    const config = loadConfig(env);
    expect(config.replica).toEqual({ id: 'hotline-7d9f-abcde', internalUrl: 'http://10.1.2.3:3001', internalPort: 3001, clusterSecret: SECRETS.CLUSTER_SECRET });
    // Alive on the port that stays open while a stopping replica hands its calls over; the public one closes at once.
    expect(container!.livenessProbe.httpGet.port).toBe(config.replica.internalPort);
  });
});
