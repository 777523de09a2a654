/**
 * A self-signed certificate for localhost and 127.0.0.1, made with the system's openssl, for a
 * scripted server spoken to over TLS (tests, the network bench). Hotline is told to trust it the
 * way a user trusts a private CA: NODE_EXTRA_CA_CERTS=<certFile>.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export interface SelfSigned {
  readonly key: string;
  readonly cert: string;
  /** The certificate as a PEM file, for NODE_EXTRA_CA_CERTS. */
  readonly certFile: string;
  /** Removes the files. */
  remove(): Promise<void>;
}

export async function makeSelfSigned(): Promise<SelfSigned> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ]);
  const [key, cert] = await Promise.all([readFile(keyFile, 'utf8'), readFile(certFile, 'utf8')]);
  return { key, cert, certFile, remove: () => rm(dir, { recursive: true, force: true }) };
}
