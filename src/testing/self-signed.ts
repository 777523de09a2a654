/**
 * A self-signed certificate for servers spoken to over TLS (the network bench's, the tests'),
 * made with the system's `openssl`, in a folder of its own that is removed afterwards. Hotline
 * trusts it as a user would a private CA: NODE_EXTRA_CA_CERTS names the certificate file.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** openssl is missing or refused: the message says which, with its own words. */
export class CertificateError extends Error {
  override readonly name = 'CertificateError';
}

export interface SelfSigned {
  /** The folder of both files, removed by remove(). */
  readonly dir: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: string;
  readonly key: string;
  remove(): Promise<void>;
}

/** A P-256 key (as most providers' fronts use) and a certificate for localhost and `ips`, valid for a day. */
export async function makeSelfSigned(ips: readonly string[] = ['127.0.0.1']): Promise<SelfSigned> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-bench-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const names = ['DNS:localhost', ...ips.map((ip) => `IP:${ip}`)].join(',');
  try {
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=hotline-bench', '-addext', `subjectAltName=${names}`,
    ]);
    return {
      dir,
      certFile,
      keyFile,
      cert: await readFile(certFile, 'utf8'),
      key: await readFile(keyFile, 'utf8'),
      remove: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: unknown }).stderr;
    throw new CertificateError(`openssl could not make a self-signed certificate: ${typeof stderr === 'string' && stderr ? stderr.trim() : String(error)}`);
  }
}
