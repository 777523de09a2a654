import express, { type ErrorRequestHandler, type Express } from 'express';
import type { CallRegistry } from '../call/call-registry.js';
import type { Logger } from '../logger.js';

export interface HttpAppOptions {
  registry: CallRegistry;
  logger: Logger;
  llm: { mode: 'remote' | 'demo'; model: string; endpoint: string };
}

export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');

  app.get('/healthz', function healthz(_req, res) {
    res.json({
      status: 'ok',
      calls: options.registry.size,
      llm:
        options.llm.mode === 'demo'
          ? { mode: 'demo', model: options.llm.model, warning: 'DEMO MODEL: scripted replies, no real LLM configured' }
          : { mode: 'remote', model: options.llm.model },
    });
  });

  app.use(function notFound(_req, res) {
    res.status(404).json({ error: 'not found' });
  });

  const onError: ErrorRequestHandler = function jsonError(error: unknown, _req, res, _next) {
    const status = httpStatusOf(error);
    if (status >= 500) options.logger.error({ err: error }, 'request failed');
    res.status(status).json({ error: status >= 500 ? 'internal error' : messageOf(error) });
  };
  app.use(onError);
  return app;
}

function httpStatusOf(error: unknown): number {
  if (error && typeof error === 'object' && 'status' in error && typeof error.status === 'number') {
    return error.status >= 400 && error.status < 600 ? error.status : 500;
  }
  return 500;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : 'bad request';
}
