import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Pretty output only for a person at a terminal or in development; JSON
 * everywhere else so log pipelines can parse it.
 */
export function createLogger(options: { level: string; env: string }): Logger {
  const pretty = options.env !== 'production' && (process.stdout.isTTY || options.env === 'development');
  return pino({
    level: options.level,
    base: { service: 'hotline' },
    // Secrets must never reach a log line, whatever object gets logged.
    redact: {
      paths: ['apiKey', '*.apiKey', 'headers.authorization', '*.headers.authorization', 'headers["x-api-token"]'],
      censor: '[redacted]',
    },
    ...(pretty && process.stdout.isTTY
      ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service' } } }
      : {}),
  });
}
