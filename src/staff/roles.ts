/**
 * Who may do what on the dashboard. A viewer reads the history and the calls' stories with numbers
 * masked; an operator also watches live calls, hands them over or ends them, and sees numbers whole;
 * an admin also runs campaigns, answers access and erasure requests, reads the audit log and edits
 * prompts.
 */
export const STAFF_ROLES = ['viewer', 'operator', 'admin'] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export function roleAtLeast(role: StaffRole, needed: StaffRole): boolean {
  return STAFF_ROLES.indexOf(role) >= STAFF_ROLES.indexOf(needed);
}

export function isStaffRole(value: unknown): value is StaffRole {
  return typeof value === 'string' && (STAFF_ROLES as readonly string[]).includes(value);
}

/** Someone signed in: a staff account, the admin token (the first admin's way in), or a proxy's user. */
export interface Who {
  readonly name: string;
  readonly role: StaffRole;
}

/** Whoever logs in with ADMIN_TOKEN: the audit log names the token, not a person (in capitals, which no staff name has). */
export const TOKEN_ADMIN: Who = { name: 'ADMIN_TOKEN', role: 'admin' };
