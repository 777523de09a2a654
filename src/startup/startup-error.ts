import { inspect } from 'node:util';
import { HotlineError } from '../errors.js';

/** Where Hotline was told to listen; a listen error names these variables. */
export interface ListenTarget {
  host: string;
  port: number;
}

export interface StartupFailure {
  /** One line (a ConfigError may hold one per bad variable) that names the variable and the fix. */
  message: string;
  /** False for a failure nobody foresaw: its stack is worth showing when asked for. */
  expected: boolean;
}

const ALL_INTERFACES = 'set HOST to an address of this machine (0.0.0.0 listens on all)';

/** What went wrong at startup, in the words of the variable to change. */
export function describeStartupError(error: unknown, target: ListenTarget): StartupFailure {
  if (error instanceof HotlineError) return { message: error.message, expected: true };
  const { code, syscall, port, address } = error as { code?: unknown; syscall?: unknown; port?: unknown; address?: unknown };
  const shownPort = typeof port === 'number' ? port : target.port;
  // A name that resolves to an address of another machine: show which address that was.
  const shownHost = typeof address === 'string' && address !== target.host ? `${target.host} (${address})` : target.host;
  if (syscall === 'listen') {
    switch (code) {
      case 'EADDRINUSE':
        return { message: `PORT ${shownPort} is already in use: stop the other program or set PORT to a free port`, expected: true };
      case 'EACCES':
        return {
          message:
            `PORT ${shownPort} may not be opened by this user (ports below 1024 need privileges): set PORT to 1024 or ` +
            'above, e.g. 3000, and forward the low port to it (a reverse proxy or a container port mapping)',
          expected: true,
        };
      case 'EADDRNOTAVAIL':
        return { message: `HOST ${shownHost} is not an address of this machine: ${ALL_INTERFACES}`, expected: true };
      case 'EAFNOSUPPORT':
        return { message: `HOST ${shownHost} is an IPv6 address, but this machine has no IPv6: ${ALL_INTERFACES}`, expected: true };
    }
  }
  if (syscall === 'getaddrinfo' && typeof code === 'string') {
    return { message: `HOST ${target.host} cannot be resolved: ${ALL_INTERFACES}`, expected: true };
  }
  const text = error instanceof Error ? error.message || error.name : String(error);
  return { message: `Hotline could not start: ${text}`, expected: false };
}

/**
 * The text for stderr: the one line, and for an unforeseen failure its stack when debugging
 * (a person reading the one line needs no trace into Hotline's code, a developer may).
 */
export function startupErrorText(error: unknown, target: ListenTarget, options: { debug: boolean }): string {
  const failure = describeStartupError(error, target);
  if (failure.expected) return failure.message;
  return options.debug ? `${failure.message}\n${inspect(error)}` : `${failure.message} (LOG_LEVEL=debug shows the stack)`;
}
