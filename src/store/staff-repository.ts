/**
 * The `staff` table: who may sign in to the dashboard, with which role. Each person has an
 * account of their own, so the audit log can say who did what; passwords are kept only as scrypt
 * hashes (src/privacy/passwords.ts), and nothing here ever hands a hash out.
 */
import { z } from 'zod';
import { HotlineError } from '../errors.js';
import { dummyVerify, hashPassword, passwordProblem, verifyPassword } from '../staff/passwords.js';
import { isStaffRole, STAFF_ROLES, type StaffRole } from '../staff/roles.js';
import type { Db } from './schema.js';

// One list of roles for the dashboard's gates and the accounts: the dashboard's, re-exported here.
export { isStaffRole, roleAtLeast, STAFF_ROLES, type StaffRole } from '../staff/roles.js';

export const MAX_STAFF_NAME_LENGTH = 64;

/**
 * ASCII only: names are compared as typed, and letters from other scripts that look like Latin
 * ones (Cyrillic а for a) would let two accounts pass for one in the audit log.
 */
const NAME = /^[A-Za-z0-9._@-]+$/;

export type StaffErrorCode = 'name_taken' | 'unknown_staff' | 'invalid_name' | 'invalid_role' | 'weak_password';

export class StaffError extends HotlineError {
  constructor(
    readonly code: StaffErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface StaffMember {
  readonly name: string;
  readonly role: StaffRole;
  /** ISO times. */
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Who signed in. */
export interface StaffIdentity {
  readonly name: string;
  readonly role: StaffRole;
}

/** What is wrong with the name as a sentence, or undefined when it will do. */
export function staffNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > MAX_STAFF_NAME_LENGTH) return `A name is 1 to ${MAX_STAFF_NAME_LENGTH} characters long, not ${name.length}.`;
  if (!NAME.test(name)) return 'A name has only letters (a-z), digits and the characters . _ - @.';
  return undefined;
}

/** The name as stored: lower case, so Anna and anna are one person. Throws StaffError for a name that cannot be one. */
export function normaliseStaffName(name: string): string {
  const problem = staffNameProblem(name);
  if (problem) throw new StaffError('invalid_name', problem);
  return name.toLowerCase();
}

const MemberRow = z
  .object({ name: z.string(), role: z.enum(STAFF_ROLES), created_at: z.string(), updated_at: z.string() })
  .transform((row): StaffMember => ({ name: row.name, role: row.role, createdAt: row.created_at, updatedAt: row.updated_at }));

const CredentialRow = z.object({ name: z.string(), role: z.enum(STAFF_ROLES), password_hash: z.string() });

export class StaffRepository {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Adds an account; StaffError `name_taken` when the name (in any case) has one already. */
  async add(name: string, role: StaffRole, password: string): Promise<void> {
    const key = normaliseStaffName(name);
    checkRole(role);
    const hash = await hashPassword(checkedPassword(password));
    const at = this.now().toISOString();
    // The primary key decides, not a look first: of two adding one name at once, one gets it.
    const inserted = await this.db
      .insertInto('staff')
      .values({ name: key, role, password_hash: hash, created_at: at, updated_at: at })
      .onConflict((oc) => oc.column('name').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) throw new StaffError('name_taken', `There is already an account named ${key}.`);
  }

  async resetPassword(name: string, password: string): Promise<void> {
    const key = normaliseStaffName(name);
    const hash = await hashPassword(checkedPassword(password));
    await this.update(key, { password_hash: hash });
  }

  async setRole(name: string, role: StaffRole): Promise<void> {
    const key = normaliseStaffName(name);
    checkRole(role);
    await this.update(key, { role });
    await this.endLogins(key);
  }

  async remove(name: string): Promise<void> {
    const key = normaliseStaffName(name);
    const deleted = await this.db.deleteFrom('staff').where('name', '=', key).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw unknown(key);
    await this.endLogins(key);
  }

  /** Every account by name, without its hash. */
  async list(): Promise<StaffMember[]> {
    const rows = await this.db.selectFrom('staff').select(['name', 'role', 'created_at', 'updated_at']).orderBy('name').execute();
    return rows.map((row) => MemberRow.parse(row));
  }

  /**
   * Who this is when the password is theirs; undefined otherwise. A name without an account, or
   * one that could never be a name, costs the same scrypt run as a wrong password: how long the
   * answer takes must not tell which names exist.
   */
  async check(name: string, password: string): Promise<StaffIdentity | undefined> {
    const key = staffNameProblem(name) === undefined ? name.toLowerCase() : undefined;
    const row = key === undefined ? undefined : await this.db.selectFrom('staff').select(['name', 'role', 'password_hash']).where('name', '=', key).executeTakeFirst();
    if (!row) {
      await dummyVerify(password);
      return undefined;
    }
    const account = CredentialRow.parse(row);
    return (await verifyPassword(password, account.password_hash)) ? { name: account.name, role: account.role } : undefined;
  }

  /** The account as it is now, without its hash; undefined once removed. */
  async get(name: string): Promise<StaffIdentity | undefined> {
    if (staffNameProblem(name) !== undefined) return undefined;
    const row = await this.db.selectFrom('staff').select(['name', 'role']).where('name', '=', name.toLowerCase()).executeTakeFirst();
    return row && isStaffRole(row.role) ? { name: row.name, role: row.role } : undefined;
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('staff')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    // PostgreSQL's count is a bigint, which its driver hands over as a string.
    return Number(row?.n ?? 0);
  }

  /**
   * The account's logins kept in the store (replicas on PostgreSQL) end with the change: every replica
   * refuses the cookie at its next request. Logins kept in a process's memory learn it from the
   * account, asked again at least every DASHBOARD_RECHECK_SECONDS (src/dashboard/session-standing.ts).
   */
  private async endLogins(key: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sessions').where('name', '=', key).execute();
  }

  private async update(key: string, change: { password_hash?: string; role?: StaffRole }): Promise<void> {
    const updated = await this.db
      .updateTable('staff')
      .set({ ...change, updated_at: this.now().toISOString() })
      .where('name', '=', key)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) throw unknown(key);
  }
}

function unknown(key: string): StaffError {
  return new StaffError('unknown_staff', `There is no account named ${key}.`);
}

/** The type says a role, but callers pass what a form or a command line gave them. */
function checkRole(role: string): void {
  if (!isStaffRole(role)) throw new StaffError('invalid_role', `A role is one of ${STAFF_ROLES.join(', ')}, not "${role}".`);
}

function checkedPassword(password: string): string {
  const problem = passwordProblem(password);
  if (problem) throw new StaffError('weak_password', problem);
  return password;
}
