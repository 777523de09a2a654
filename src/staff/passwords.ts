/**
 * Staff passwords, stored as scrypt hashes: memory-hard, so a stolen table costs an attacker
 * memory as well as time per guess, which graphics cards do not make cheap. Node's scrypt runs on
 * libuv's thread pool, so a sign-in never blocks the event loop (and the pool's size, 4 by
 * default, bounds how much memory concurrent sign-ins take: 32 MiB each).
 *
 * The stored form carries its own parameters and salt,
 *
 *   scrypt$N=32768,r=8,p=1$<salt, base64url>$<hash, base64url>
 *
 * so the parameters can be raised later without making the hashes already stored unreadable.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export const MIN_PASSWORD_LENGTH = 12;
/** scrypt reads all of it: a limit keeps a pasted file from costing more than a password. */
export const MAX_PASSWORD_LENGTH = 1024;

interface Parameters {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** 2^15, 8, 1: about 32 MiB and some tens of milliseconds a hash, dear for every guess of an attacker's and cheap for one sign-in. */
const CURRENT: Parameters = { N: 32768, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;

/**
 * Bounds on what a stored string may ask for: it comes from our own table, but a row edited by
 * hand should not be able to make one sign-in take gigabytes or minutes.
 */
const LIMITS = { minLogN: 10, maxLogN: 20, maxR: 32, maxP: 16, maxMemory: 256 * 1024 * 1024, minSaltBytes: 8, minKeyBytes: 16, maxKeyBytes: 64 } as const;

const FORMAT = /^scrypt\$N=(\d{1,8}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** A new hash of the password, with a fresh random salt and the current parameters. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, KEY_BYTES, CURRENT);
  return format(CURRENT, salt, hash);
}

/** Whether the password is the one `stored` was made of; false for a stored value that is not a hash of ours. Never throws. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) return false;
  try {
    const candidate = await derive(password, parsed.salt, parsed.hash.length, parsed.parameters);
    return timingSafeEqual(candidate, parsed.hash);
  } catch {
    return false;
  }
}

/**
 * Random bytes in the current format: verifying against it costs what verifying against a real
 * hash costs, and no password matches it (its "hash" was never derived from one).
 */
const DUMMY = format(CURRENT, randomBytes(SALT_BYTES), randomBytes(KEY_BYTES));

/**
 * Spends the time a real verification spends, and fails. For a sign-in with a name nobody has:
 * answering it faster than a wrong password would tell an attacker which names exist.
 */
export async function dummyVerify(password: string): Promise<false> {
  await verifyPassword(password, DUMMY);
  return false;
}

/** What is wrong with the password as a sentence, or undefined when it will do. */
export function passwordProblem(password: string): string | undefined {
  const characters = [...password];
  if (characters.length < MIN_PASSWORD_LENGTH) {
    return `The password is ${characters.length} character${characters.length === 1 ? '' : 's'} long; it needs at least ${MIN_PASSWORD_LENGTH}.`;
  }
  if (characters.length > MAX_PASSWORD_LENGTH) return `The password is longer than ${MAX_PASSWORD_LENGTH} characters.`;
  if (characters.every((c) => c === characters[0])) return 'The password is one character repeated; use different characters.';
  return undefined;
}

function derive(password: string, salt: Buffer, keyBytes: number, { N, r, p }: Parameters): Promise<Buffer> {
  // The same password typed on two systems may arrive in two Unicode forms (é as one code point or two).
  const secret = Buffer.from(password.normalize('NFC'), 'utf8');
  const options: ScryptOptions = { N, r, p, maxmem: memoryFor({ N, r, p }) };
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, keyBytes, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/**
 * What scrypt needs (OpenSSL's count: 128·r·(N+2) for its table, 128·r·p for its blocks), with room
 * to spare; Node's default of 32 MiB is just too little for N=2^15, r=8.
 */
function memoryFor({ N, r, p }: Parameters): number {
  return Math.max(64 * 1024 * 1024, 128 * r * (N + 2) + 128 * r * p + 1024 * 1024);
}

function format({ N, r, p }: Parameters, salt: Buffer, hash: Buffer): string {
  return `scrypt$N=${N},r=${r},p=${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

function parse(stored: string): { parameters: Parameters; salt: Buffer; hash: Buffer } | undefined {
  const match = FORMAT.exec(stored);
  if (!match) return undefined;
  const [, n = '', r = '', p = '', salt = '', hash = ''] = match;
  const parameters = { N: Number(n), r: Number(r), p: Number(p) };
  const logN = Math.log2(parameters.N);
  if (!Number.isInteger(logN) || logN < LIMITS.minLogN || logN > LIMITS.maxLogN) return undefined;
  if (parameters.r < 1 || parameters.r > LIMITS.maxR || parameters.p < 1 || parameters.p > LIMITS.maxP) return undefined;
  if (128 * parameters.r * parameters.N > LIMITS.maxMemory) return undefined;
  const saltBytes = Buffer.from(salt, 'base64url');
  const hashBytes = Buffer.from(hash, 'base64url');
  if (saltBytes.length < LIMITS.minSaltBytes || hashBytes.length < LIMITS.minKeyBytes || hashBytes.length > LIMITS.maxKeyBytes) return undefined;
  return { parameters, salt: saltBytes, hash: hashBytes };
}
