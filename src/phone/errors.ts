import { HotlineError } from '../errors.js';

/** The number cannot be turned into E.164; the message says what is wrong with it. Answered with 400. */
export class InvalidPhoneNumberError extends HotlineError {
  readonly code = 'invalid_phone_number';
  readonly status = 400;
  constructor(
    readonly input: string,
    reason: string,
  ) {
    super(`Invalid phone number "${input.length > 40 ? `${input.slice(0, 40)}…` : input}": ${reason}`);
  }
}
