/**
 * One chat completion request to the scripted server, from its body to its last byte: validated,
 * recorded, handed to the script, and answered as the script says (an error, a recorded stream, a
 * hang, a cut, or a planned reply streamed or whole). Apart from the server because this is where a
 * request's timing lives; the server only routes and listens.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseChatRequest } from './chat-request.js';
import type { RecordedRequest, RecordedToken, RequestOutcome, ScriptedLlmServerOptions, ScriptedReply } from './scripted-contract.js';
import { errorFor, randomId, readBody, sendJson } from './scripted-http.js';
import { ScriptedPromptCache, type PromptCount } from './scripted-prompt-cache.js';
import { planReply, sseEvents, usageFor } from './scripted-reply-plan.js';

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Answers one POST /chat/completions; `connectionRequests` is how many its connection carried before it. */
export type ChatHandler = (req: IncomingMessage, res: ServerResponse, requestId: string, connectionRequests: number) => Promise<void>;

/**
 * The handler of one server's chat requests. `publish` is told each request as soon as it is read,
 * before the script answers: a test waiting on `nextRequest` sees it while its reply is still running.
 */
export function chatHandler(options: ScriptedLlmServerOptions, publish: (record: RecordedRequest) => void): ChatHandler {
  // One cache and one arrival count per server: a request's index and its cached prefix are the server's.
  const promptCache = new ScriptedPromptCache();
  let arrivals = 0;

  return async (req, res, requestId, connectionRequests) => {
    const receivedAt = now();
    const text = await readBody(req);
    const index = arrivals++;

    let settle: (outcome: RequestOutcome) => void = () => undefined;
    const ended = new Promise<RequestOutcome>((resolve) => {
      settle = (outcome) => {
        settle = () => undefined;
        resolve(outcome);
      };
    });

    // Everything that may still write checks `stopped`; the first of finish/close wins.
    let stopped = false;
    let breaking = false;
    let timer: NodeJS.Timeout | undefined;
    const abort = new AbortController();
    const stop = (): void => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
    res.on('finish', () => {
      stop();
      settle('completed');
    });
    res.on('close', () => {
      stop();
      if (!res.writableFinished) abort.abort();
      settle(breaking ? 'broken' : res.writableFinished ? 'completed' : 'aborted');
    });

    const { raw, model, validation } = parseChatRequest(text);

    const record: RecordedRequest = {
      index,
      body: validation.ok
        ? validation.body
        : { model, messages: [] },
      rawBody: raw,
      rawText: text,
      receivedAt,
      status: 0,
      tokens: [],
      ended,
    };

    if (!validation.ok) {
      record.status = 400;
      record.validationError = validation.error.message;
      publish(record);
      sendJson(res, 400, { error: validation.error }, requestId);
      return;
    }
    publish(record);
    const body = validation.body;

    let reply: ScriptedReply;
    try {
      reply = await options.script(body, { index, signal: abort.signal, connectionRequests });
    } catch (error) {
      if (stopped) return;
      record.status = 500;
      record.scriptError = error instanceof Error ? error.message : String(error);
      sendJson(res, 500, { error: errorFor(500) }, requestId);
      return;
    }
    if (stopped) return;

    if (reply.status !== undefined && reply.status !== 200) {
      const status = reply.status;
      record.status = status;
      const send = (): void => {
        timer = undefined;
        if (!stopped) sendJson(res, status, { error: errorFor(status, reply.errorMessage) }, requestId, reply.headers);
      };
      if (reply.ttftMs) timer = setTimeout(send, reply.ttftMs);
      else send();
      return;
    }

    record.status = 200;
    if (reply.sse !== undefined) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId });
      const events = sseEvents(reply.sse);
      const firstDelay = reply.ttftMs ?? options.ttftMs ?? 0;
      const delay = reply.tokenDelayMs ?? options.tokenDelayMs ?? 0;
      let sent = 0;
      const sendNext = (): void => {
        timer = undefined;
        if (stopped) return;
        if (sent === events.length) {
          res.end();
          return;
        }
        res.write(events[sent++]!);
        timer = setTimeout(sendNext, delay);
      };
      if (firstDelay > 0) {
        res.flushHeaders();
        timer = setTimeout(sendNext, firstDelay);
      } else sendNext();
      return;
    }
    const streaming = body.stream === true;
    const ttftMs = reply.ttftMs ?? options.ttftMs ?? 0;
    const tokenDelayMs = reply.tokenDelayMs ?? options.tokenDelayMs ?? 0;
    let counted: PromptCount | undefined;
    const prompt = (): PromptCount => (counted ??= promptCache.count(raw));
    const plan = planReply(body, reply, ttftMs, tokenDelayMs, prompt);

    if (streaming) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-request-id': requestId,
      });
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    }
    if (reply.hang) {
      res.flushHeaders();
      return;
    }

    const breakAfter = reply.breakAfterTokens;
    const cut = (): void => {
      stop();
      breaking = true;
      res.socket?.destroy();
    };
    const recordToken = (token: Omit<RecordedToken, 'at'>): void => {
      const at = now();
      const entry: RecordedToken = token.toolCallIndex === undefined ? { text: token.text, at } : { ...token, at };
      record.tokens.push(entry);
      options.onToken?.(record, token.text, at);
    };

    if (!streaming) {
      const tokenSteps = plan.steps.filter((step) => step.token !== undefined);
      const generationMs = tokenSteps.length === 0 ? ttftMs : ttftMs + tokenDelayMs * (tokenSteps.length - 1);
      const finish = (): void => {
        timer = undefined;
        if (stopped) return;
        if (breakAfter !== undefined && breakAfter <= tokenSteps.length) {
          cut();
          return;
        }
        const message = {
          role: 'assistant',
          content: plan.content,
          refusal: null,
          annotations: [],
          ...(plan.toolCalls.length > 0 ? { tool_calls: plan.toolCalls } : {}),
        };
        res.end(
          JSON.stringify({
            id: randomId('chatcmpl-', 29),
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [
              { index: 0, message, logprobs: null, finish_reason: plan.toolCalls.length > 0 ? 'tool_calls' : 'stop' },
            ],
            usage: usageFor(prompt(), plan.completionTokens),
            service_tier: 'default',
            system_fingerprint: 'fp_hotline',
          }),
        );
        for (const step of tokenSteps) if (step.token) recordToken(step.token);
      };
      if (generationMs > 0) timer = setTimeout(finish, generationMs);
      else finish();
      return;
    }

    let next = 0;
    let tokensWritten = 0;
    const run = (): void => {
      timer = undefined;
      while (!stopped && next < plan.steps.length) {
        const step = plan.steps[next++];
        if (!step) break;
        if (step.token) tokensWritten++;
        if (breakAfter !== undefined && tokensWritten >= breakAfter && (step.token || next === 1)) {
          // Mark the break before writing so a close racing the write still counts as 'broken';
          // cut only once the chunk has left, or the client would never see the last token.
          stop();
          breaking = true;
          res.write(step.data, () => cut());
          if (step.token) recordToken(step.token);
          return;
        }
        res.write(step.data);
        if (step.token) recordToken(step.token);
        if (stopped) return;
        const following = plan.steps[next];
        if (following && following.delayMs > 0) {
          timer = setTimeout(run, following.delayMs);
          return;
        }
      }
      if (!stopped) res.end();
    };
    run();
  };
}
