/**
 * Why the running Hotline refused a command-line tool's admin request, said for both ends. The
 * token is set in two places — where Hotline runs, and where the tool runs — and a person who set
 * it for the tool alone reads "set ADMIN_TOKEN" as done already: the answer says which side lacks it.
 */
import { ADMIN_API_OFF } from '../transport/auth.js';

/** The explanation of a 401, 403 or 404 from `where` (the Hotline's address); undefined for other answers. */
export function adminRefusal(status: number, answer: string, where: string): string | undefined {
  if (status === 404 && answer.startsWith(ADMIN_API_OFF)) {
    return (
      `the Hotline running at ${where} was started without ADMIN_TOKEN, so its admin API is off: setting ADMIN_TOKEN ` +
      'for this command is not enough. Set ADMIN_TOKEN where Hotline runs (its environment or .env) to the same value, and restart it'
    );
  }
  if (status === 404) return `${where} has no Hotline admin API there (${answer}): is Hotline running at this address? Give it with --url or BOT_URL`;
  if (status === 401) {
    return (
      `the Hotline running at ${where} refused the admin token (${answer}): the ADMIN_TOKEN this command sends (environment, .env ` +
      'or --token) must be the value that Hotline was started with'
    );
  }
  if (status === 403) return `the Hotline at ${where}, or a proxy in front of it, refused the request (${answer})`;
  return undefined;
}
