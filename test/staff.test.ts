import { randomBytes, scryptSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { runStaffCli } from '../src/cli/staff.js';
import { dummyVerify, hashPassword, passwordProblem, verifyPassword } from '../src/staff/passwords.js';
import { AuditLog } from '../src/privacy/audit-log.js';
import { roleAtLeast, StaffError, StaffRepository, STAFF_ROLES } from '../src/store/staff-repository.js';
import { openStore } from '../src/store/store.js';
import { textSink } from './helpers/text-sink.js';
import { freshStore, freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const PASSWORD = 'secret-password-123';
/**
 * Each password set or checked is a scrypt hash (about 100 ms of CPU and 32 MB): a test making a dozen of them,
 * each CLI run opening its store, outlasted the default 15 s on a two-core runner beside a CPU hog.
 */
const HASHING = { timeout: 60_000 };

describe('passwords', () => {
  test('a hash verifies its password and no other', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword('secret-password-124', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  test('the string carries scrypt, its parameters, a 16-byte salt and a 32-byte hash; two hashes of one password differ', async () => {
    const first = await hashPassword(PASSWORD);
    const second = await hashPassword(PASSWORD);
    expect(first).toMatch(/^scrypt\$N=32768,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(first).not.toBe(second);
    expect(first.split('$')[2]).not.toBe(second.split('$')[2]);
    expect(first).not.toContain(PASSWORD);
  });

  test('the same password in another Unicode form is the same password', async () => {
    const composed = 'caf\u00e9-au-lait-12';
    const decomposed = 'cafe\u0301-au-lait-12';
    expect(await verifyPassword(decomposed, await hashPassword(composed))).toBe(true);
  });

  test('a hash made with other parameters still verifies: they are read from the string', async () => {
    const salt = randomBytes(16);
    const hash = scryptSync(PASSWORD, salt, 32, { N: 1024, r: 4, p: 2 });
    const stored = `scrypt$N=1024,r=4,p=2$${salt.toString('base64url')}$${hash.toString('base64url')}`;
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword('another-password', stored)).toBe(false);
  });

  test('a stored value that is no hash of ours is false, never an error', async () => {
    const good = await hashPassword(PASSWORD);
    const [, , salt = '', hash = ''] = good.split('$');
    const malformed = [
      '',
      PASSWORD,
      '$2b$12$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234',
      'scrypt$N=32768,r=8,p=1$$',
      `scrypt$N=32768,r=8,p=1$${salt}`,
      `scrypt$N=32768,r=8,p=1$${salt}$${hash}$extra`,
      `scrypt$N=32768,r=8$${salt}$${hash}`,
      `scrypt$N=30000,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=1073741824,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=32768,r=0,p=1$${salt}$${hash}`,
      `scrypt$N=32768,r=8,p=1$${salt}$${hash.slice(0, 10)}`,
      `scrypt$N=32768,r=8,p=1$${salt}$${hash.slice(0, -1)}!`,
      `scrypt$N=32768,r=8,p=1$not+base64/${salt}$${hash}`,
      ` ${good}`,
    ];
    for (const stored of malformed) {
      await expect(verifyPassword(PASSWORD, stored), stored).resolves.toBe(false);
    }
  });

  test('the dummy verification fails and costs about what a real one does', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(await dummyVerify(PASSWORD)).toBe(false);
    const fastest = async (work: () => Promise<unknown>): Promise<number> => {
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        await work();
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    const real = await fastest(() => verifyPassword('wrong-password-1', stored));
    const dummy = await fastest(() => dummyVerify('wrong-password-1'));
    // Loose, for busy machines: without scrypt the dummy would take well under a millisecond.
    expect(dummy).toBeGreaterThan(real / 3);
  });

  test('passwordProblem: at least 12 characters, not one character repeated', () => {
    expect(passwordProblem(PASSWORD)).toBeUndefined();
    expect(passwordProblem('abcdefghijkl')).toBeUndefined();
    expect(passwordProblem('short')).toBe('The password is 5 characters long; it needs at least 12.');
    expect(passwordProblem('')).toMatch(/0 characters long/);
    // Characters, not UTF-16 units: eleven emoji are eleven characters.
    expect(passwordProblem('🔑'.repeat(6) + '🔒'.repeat(5))).toMatch(/11 characters long/);
    expect(passwordProblem('aaaaaaaaaaaaaaaa')).toBe('The password is one character repeated; use different characters.');
        expect(passwordProblem('xy'.repeat(600))).toMatch(/longer than 1024/);
  });
});

test('roles are ordered viewer < operator < admin', () => {
  expect(STAFF_ROLES).toEqual(['viewer', 'operator', 'admin']);
  expect(roleAtLeast('admin', 'operator')).toBe(true);
  expect(roleAtLeast('operator', 'operator')).toBe(true);
  expect(roleAtLeast('viewer', 'operator')).toBe(false);
  expect(roleAtLeast('operator', 'admin')).toBe(false);
});

/** The StaffError code a promise rejects with. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(StaffError);
    return (error as StaffError).code;
  }
  throw new Error('expected a StaffError');
}

describe.each(await storeKinds())('StaffRepository (%s)', (kind) => {
  test('accounts: add, names in any case, check, reset, role, remove, list without hashes', HASHING, async () => {
    const store = await freshStore(kind);
    let clock = new Date('2026-03-01T09:00:00.000Z');
    const staff = new StaffRepository(store.db, () => clock);
    try {
      expect(await staff.count()).toBe(0);
      expect(await staff.list()).toEqual([]);

      await staff.add('Anna', 'operator', PASSWORD);
      await staff.add('bert@example.com', 'viewer', 'bert-password-42');
      expect(await staff.count()).toBe(2);
      expect(await codeOf(staff.add('anna', 'admin', 'another-password-1'))).toBe('name_taken');
      expect(await codeOf(staff.add('ANNA', 'admin', 'another-password-1'))).toBe('name_taken');
      expect(await codeOf(staff.add('carl', 'operator', 'short'))).toBe('weak_password');
      expect(await codeOf(staff.add('carl smith', 'operator', PASSWORD))).toBe('invalid_name');
      expect(await codeOf(staff.add('x'.repeat(65), 'operator', PASSWORD))).toBe('invalid_name');
      expect(await codeOf(staff.add('', 'operator', PASSWORD))).toBe('invalid_name');
      expect(await codeOf(staff.add('cаrl', 'operator', PASSWORD))).toBe('invalid_name'); // a Cyrillic а
      expect(await codeOf(staff.add('carl', 'root' as 'admin', PASSWORD))).toBe('invalid_role');
      await staff.add('x'.repeat(64), 'viewer', PASSWORD);
      await staff.remove('x'.repeat(64));

      expect(await staff.check('anna', PASSWORD)).toEqual({ name: 'anna', role: 'operator' });
      expect(await staff.check('ANNA', PASSWORD)).toEqual({ name: 'anna', role: 'operator' });
      expect(await staff.check('anna', 'wrong-password-1')).toBeUndefined();
      expect(await staff.check('nobody', PASSWORD)).toBeUndefined();
      expect(await staff.check('no body!', PASSWORD)).toBeUndefined();
      expect(await staff.check('bert@example.com', 'bert-password-42')).toEqual({ name: 'bert@example.com', role: 'viewer' });

      clock = new Date('2026-03-02T10:00:00.000Z');
      await staff.resetPassword('Anna', 'a-new-password-7');
      expect(await staff.check('anna', PASSWORD)).toBeUndefined();
      expect(await staff.check('anna', 'a-new-password-7')).toEqual({ name: 'anna', role: 'operator' });
      expect(await codeOf(staff.resetPassword('anna', 'aaaaaaaaaaaaaaaa'))).toBe('weak_password');
      expect(await codeOf(staff.resetPassword('nobody', PASSWORD))).toBe('unknown_staff');

      // A change of role or a removal ends the account's logins kept in the store (replicas), and no one else's.
      const login = (id: string, name: string) => store.db.insertInto('dashboard_sessions').values({ id_hash: id, expires_at: Date.now() + 60_000, name, role: 'viewer' }).execute();
      await login('bert-1', 'bert@example.com');
      await login('anna-1', 'anna');
      const logins = async () => (await store.db.selectFrom('dashboard_sessions').select('id_hash').orderBy('id_hash').execute()).map((row) => row.id_hash);
      clock = new Date('2026-03-03T11:00:00.000Z');
      await staff.setRole('BERT@example.com', 'admin');
      expect(await logins()).toEqual(['anna-1']);
      expect(await staff.check('bert@example.com', 'bert-password-42')).toEqual({ name: 'bert@example.com', role: 'admin' });
      expect(await codeOf(staff.setRole('nobody', 'admin'))).toBe('unknown_staff');

      const listed = await staff.list();
      expect(listed).toEqual([
        { name: 'anna', role: 'operator', createdAt: '2026-03-01T09:00:00.000Z', updatedAt: '2026-03-02T10:00:00.000Z' },
        { name: 'bert@example.com', role: 'admin', createdAt: '2026-03-01T09:00:00.000Z', updatedAt: '2026-03-03T11:00:00.000Z' },
      ]);
      expect(JSON.stringify(listed)).not.toContain('scrypt');

      // The table holds hashes only.
      const rows = await store.db.selectFrom('staff').select(['name', 'password_hash']).execute();
      for (const row of rows) {
        expect(row.password_hash).toMatch(/^scrypt\$/);
        expect(row.password_hash).not.toContain('password');
      }

      await staff.remove('Anna');
      expect(await logins()).toEqual([]);
      expect(await codeOf(staff.remove('anna'))).toBe('unknown_staff');
      expect(await staff.check('anna', 'a-new-password-7')).toBeUndefined();
      expect(await staff.count()).toBe(1);
    } finally {
      await store.close();
    }
  });

  test('of two adding one name at once, one gets it', async () => {
    const store = await freshStore(kind);
    const staff = new StaffRepository(store.db);
    try {
      const results = await Promise.allSettled([staff.add('dora', 'viewer', PASSWORD), staff.add('DORA', 'admin', PASSWORD)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect((refused?.reason as StaffError).code).toBe('name_taken');
      expect(await staff.count()).toBe(1);
    } finally {
      await store.close();
    }
  });
});

describe.each(await storeKinds())('npm run staff (%s)', (kind) => {
  let location: TestStoreLocation | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await location?.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
    location = dir = undefined;
  });

  async function run(args: string[], input: string[] = [`${PASSWORD}\n`]): Promise<{ code: number; stdout: string; stderr: string }> {
    location ??= await freshStoreLocation(kind);
    dir ??= await mkdtemp(path.join(tmpdir(), 'hotline-staff-'));
    const out = textSink();
    let stderr = '';
    const env = { ...location.env, TRANSCRIPTS_DIR: dir, NODE_ENV: 'test' };
    const code = await runStaffCli(args, env, { stdout: out.stream, stderr: { write: (text: string) => ((stderr += text), true) }, stdin: Readable.from(input) });
    return { code, stdout: out.text(), stderr };
  }

  async function withStore<T>(work: (staff: StaffRepository, audit: AuditLog) => Promise<T>): Promise<T> {
    const store = await openStore(location!.location, pino({ level: 'silent' }));
    try {
      return await work(new StaffRepository(store.db), new AuditLog(store.db, pino({ level: 'silent' })));
    } finally {
      await store.close();
    }
  }

  test('add, list, reset, role, remove; every change in the audit log', HASHING, async () => {
    expect(await run(['list'])).toEqual({ code: 0, stdout: 'no staff accounts yet: npm run staff -- add --name <n> --role admin\n', stderr: '' });

    expect(await run(['add', '--name', 'Anna', '--role', 'operator'])).toEqual({ code: 0, stdout: 'added anna (operator)\n', stderr: '' });
    expect(await withStore((staff) => staff.check('anna', PASSWORD))).toEqual({ name: 'anna', role: 'operator' });
    // A line end as Windows writes it is not part of the password.
    expect((await run(['add', '--name', 'bert', '--role', 'viewer'], ['bert-password-42\r\n', 'ignored second line\n'])).code).toBe(0);
    expect(await withStore((staff) => staff.check('bert', 'bert-password-42'))).toEqual({ name: 'bert', role: 'viewer' });

    const taken = await run(['add', '--name', 'ANNA', '--role', 'admin']);
    expect(taken).toEqual({ code: 1, stdout: '', stderr: 'staff add: There is already an account named anna.\n' });

    const listed = await run(['list']);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^name +role +created +updated$/);
    expect(lines[1]).toMatch(/^anna +operator +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(lines[2]).toMatch(/^bert +viewer +/);
    expect(listed.stdout).not.toContain('scrypt');

    expect(await run(['reset', '--name', 'anna'], ['a-new-password-7\n'])).toEqual({ code: 0, stdout: 'new password for anna\n', stderr: '' });
    expect(await withStore((staff) => staff.check('anna', 'a-new-password-7'))).toEqual({ name: 'anna', role: 'operator' });

    expect(await run(['role', '--name', 'anna', '--role', 'admin'])).toEqual({ code: 0, stdout: 'anna is admin now\n', stderr: '' });
    expect(await run(['remove', '--name', 'bert'])).toEqual({ code: 0, stdout: 'removed bert\n', stderr: '' });
    expect(await run(['remove', '--name', 'bert'])).toEqual({ code: 1, stdout: '', stderr: 'staff remove: There is no account named bert.\n' });
    expect(await run(['reset', '--name', 'nobody'])).toMatchObject({ code: 1, stderr: 'staff reset: There is no account named nobody.\n' });
    expect(await run(['role', '--name', 'nobody', '--role', 'viewer'])).toMatchObject({ code: 1, stderr: 'staff role: There is no account named nobody.\n' });

    const entries = await withStore((_, audit) => audit.list());
    expect(entries.map((e) => [e.action, e.detail]).reverse()).toEqual([
      ['staff_add', { staff: 'anna', role: 'operator' }],
      ['staff_add', { staff: 'bert', role: 'viewer' }],
      ['staff_reset', { staff: 'anna' }],
      ['staff_role', { staff: 'anna', role: 'admin' }],
      ['staff_remove', { staff: 'bert' }],
    ]);
    expect(entries.every((e) => e.actor.startsWith('cli:') && e.role === 'admin')).toBe(true);
    expect(JSON.stringify(entries)).not.toMatch(/password-|scrypt/);
  });

  test('--generate makes a password, prints it once, and it signs in', HASHING, async () => {
    const added = await run(['add', '--name', 'carl', '--role', 'viewer', '--generate'], []);
    expect(added.code).toBe(0);
    expect(added.stderr).toBe('');
    const match = /^added carl \(viewer\)\npassword for carl: ([A-Za-z0-9_-]{24})\nIt is shown only this once\. Hand it to carl safely .*\n$/.exec(added.stdout);
    expect(match, added.stdout).not.toBeNull();
    const first = match![1]!;
    expect(await withStore((staff) => staff.check('carl', first))).toEqual({ name: 'carl', role: 'viewer' });

    const reset = await run(['reset', '--name', 'carl', '--generate'], []);
    expect(reset.code).toBe(0);
    const second = /password for carl: (\S+)\n/.exec(reset.stdout)![1]!;
    expect(second).not.toBe(first);
    expect(await withStore((staff) => Promise.all([staff.check('carl', first), staff.check('carl', second)]))).toEqual([undefined, { name: 'carl', role: 'viewer' }]);
  });

  test('a password given is never printed; a weak or missing one is refused before anything changes', HASHING, async () => {
    const given = await run(['add', '--name', 'dora', '--role', 'viewer']);
    expect(given.stdout + given.stderr).not.toContain(PASSWORD);

    for (const [input, problem] of [
      [['short\n'], /^staff: The password is 5 characters long; it needs at least 12\. See `npm run staff -- --help`\.\n$/],
      [['aaaaaaaaaaaaaaaaaaaa\n'], /^staff: The password is one character repeated; use different characters\. See/],
      [[], /^staff: no password on standard input: give it as its first line, or use --generate\. See/],
      [['\n', `${PASSWORD}\n`], /^staff: no password on standard input/],
    ] as const) {
      const refused = await run(['add', '--name', 'emil', '--role', 'viewer'], [...input]);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(problem);
    }
    expect(await run(['reset', '--name', 'dora'], ['tooshort\n'])).toMatchObject({ code: 2, stdout: '' });
    expect(await withStore((staff) => staff.list())).toMatchObject([{ name: 'dora' }]);
    expect(await withStore((staff) => staff.check('dora', PASSWORD))).toEqual({ name: 'dora', role: 'viewer' });
  });

  test('usage errors: exit 2, one line on stderr pointing at --help', async () => {
    const cases: [string[], RegExp][] = [
      [[], /^staff: say what to do: add, reset, role, remove, list\./],
      [['grant'], /^staff: unknown command "grant": use add, reset, role, remove, list\./],
      [['list', 'extra'], /^staff: unexpected "extra" after list\./],
      [['--bogus'], /^staff: Unknown option '--bogus'/],
      [['add', '--role', 'viewer'], /^staff: add needs --name, the account's name\./],
      [['add', '--name', 'anna'], /^staff: add needs --role: viewer, operator, admin\./],
      [['add', '--name', 'anna', '--role', 'root'], /^staff: --role must be one of viewer, operator, admin, not "root"\./],
      [['add', '--name', 'anna smith', '--role', 'viewer'], /^staff: --name "anna smith": A name has only letters/],
      [['add', '--name', 'x'.repeat(65), '--role', 'viewer'], /^staff: --name "x+": A name is 1 to 64 characters long, not 65\./],
      [['reset', '--name', 'anna', '--role', 'admin'], /^staff: --role goes with add and role\./],
      [['role', '--name', 'anna'], /^staff: role needs --role/],
      [['remove', '--name', 'anna', '--generate'], /^staff: --generate goes with add and reset\./],
      [['list', '--name', 'anna'], /^staff: list takes no --name\./],
      [['remove'], /^staff: remove needs --name/],
    ];
    for (const [args, problem] of cases) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(problem);
      expect(lines[0]).toContain('See `npm run staff -- --help`.');
    }
  });

  test('--help prints the usage with a default and an example', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stderr).toBe('');
    expect(help.stdout).toMatch(/^Usage:\s+npm run staff --/);
    expect(help.stdout).toContain('(default');
    expect(help.stdout).toMatch(/Example:\n +npm run staff -- /);
  });
});
