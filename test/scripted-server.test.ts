import fc from 'fast-check';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startScriptedLlmServer,
  tokenize,
  type Script,
  type ScriptedLlmServer,
  type ScriptedLlmServerOptions,
} from '../src/llm/scripted-server.js';

const servers: ScriptedLlmServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(script: Script, options: Omit<ScriptedLlmServerOptions, 'script'> = {}) {
  const server = await startScriptedLlmServer({ script, ...options });
  servers.push(server);
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'test', maxRetries: 0 });
  return { server, client };
}

const hello: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello?' }];

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function contentOf(chunks: ChatCompletionChunk[]): string {
  return chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
}

/** Rejects with whatever create() throws, so tests can assert on the SDK's error class. */
async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to fail');
}

describe('tokenize', () => {
  it('splits like an LLM: leading spaces on words, separate punctuation and newlines', () => {
    expect(tokenize('Hello, world. How are you?\nFine!')).toEqual([
      'Hello',
      ',',
      ' world',
      '.',
      ' How',
      ' are',
      ' you',
      '?',
      '\n',
      'Fine',
      '!',
    ]);
    expect(tokenize("I don't know")).toEqual(['I', ' don', "'t", ' know']);
    expect(tokenize('It costs 12345 dollars')).toEqual(['It', ' costs', ' 123', '45', ' dollars']);
  });

  it('breaks long words into sub-word pieces', () => {
    const pieces = tokenize(' internationalization');
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces[0]?.startsWith(' ')).toBe(true);
    expect(pieces.join('')).toBe(' internationalization');
  });

  it('round-trips arbitrary text exactly, without empty pieces', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.lorem()), (text) => {
        const pieces = tokenize(text);
        expect(pieces.join('')).toBe(text);
        expect(pieces.every((piece) => piece.length > 0)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('startScriptedLlmServer with the real openai SDK', () => {
  it('streams content that reassembles exactly, in OpenAI-shaped chunks', async () => {
    const content = 'Hello there! We open at 9 a.m.\n\nSee you soon, internationally.';
    const { server, client } = await start(() => ({ content }));

    const stream = await client.chat.completions.create({ model: 'hotline-demo', messages: hello, stream: true });
    const chunks = await collect(stream);

    expect(contentOf(chunks)).toBe(content);
    const [first] = chunks;
    expect(first?.object).toBe('chat.completion.chunk');
    expect(first?.id).toMatch(/^chatcmpl-/);
    expect(first?.model).toBe('hotline-demo');
    expect(first?.choices[0]?.delta).toMatchObject({ role: 'assistant', content: '' });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((c) => c.choices[0]?.finish_reason === null)).toBe(true);
    // One chunk per token, besides the role and finish chunks.
    expect(chunks.length).toBe(tokenize(content).length + 2);

    const request = server.requests[0];
    expect(request?.status).toBe(200);
    expect(request?.body.messages).toEqual(hello);
    expect(await request?.ended).toBe('completed');
  });

  it('streams tool calls that the SDK reassembles into name and arguments', async () => {
    const speak = JSON.stringify({ text: "We're at 12 Market Street, next to the station." });
    const { server, client } = await start(() => ({
      content: 'Sure.',
      toolCalls: [
        { name: 'speak', arguments: speak },
        { name: 'transfer', arguments: '{}' },
      ],
    }));

    const stream = client.chat.completions.stream({
      model: 'hotline-demo',
      messages: hello,
      tools: [
        { type: 'function', function: { name: 'speak', parameters: { type: 'object', properties: { text: { type: 'string' } } } } },
        { type: 'function', function: { name: 'transfer' } },
      ],
    });
    const completion = await stream.finalChatCompletion();

    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBe('Sure.');
    const calls = (choice?.message.tool_calls ?? []).map((call) =>
      call.type === 'function' ? { id: call.id, name: call.function.name, arguments: call.function.arguments } : undefined,
    );
    expect(calls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'speak', arguments: speak },
      { id: expect.stringMatching(/^call_/), name: 'transfer', arguments: '{}' },
    ]);
    const request = await server.nextRequest();
    // Argument pieces are recorded as tokens of their tool call.
    expect(request.tokens.filter((t) => t.toolCallIndex === 0).map((t) => t.text).join('')).toBe(speak);
    expect(request.tokens.filter((t) => t.toolCallIndex === undefined).map((t) => t.text).join('')).toBe('Sure.');
  });

  it('sends a usage chunk when stream_options.include_usage is set', async () => {
    const { client } = await start(() => ({ content: 'One two three.' }));
    const stream = await client.chat.completions.create({
      model: 'hotline-demo',
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = await collect(stream);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.completion_tokens).toBe(tokenize('One two three.').length);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('counts as cached the prefix an earlier request shared, tools first, from 1,024 tokens on in steps of 128', async () => {
    const { client, server } = await start(() => ({ content: 'Sure.' }));
    // About 5,000 bytes every request shares, then what each adds.
    const system: ChatCompletionMessageParam = { role: 'system', content: 'Always be brief and kind. '.repeat(200) };
    const usage = async (messages: ChatCompletionMessageParam[], marked = false) => {
      const tools = [{ type: 'function' as const, function: { name: 'hangup', parameters: { type: 'object', properties: {} } }, ...(marked ? { cache_control: { type: 'ephemeral' } } : {}) }];
      const chunks = await collect(await client.chat.completions.create({ model: 'm', messages, tools, stream: true, stream_options: { include_usage: true } }));
      return chunks.at(-1)!.usage!;
    };
    const question: ChatCompletionMessageParam = { role: 'user', content: 'Tell me more about it. '.repeat(30) };
    const first = await usage([system, question]);
    expect(first.prompt_tokens_details?.cached_tokens).toBe(0);
    const second = await usage([system, { role: 'user', content: 'Something else entirely.' }]);
    const shared = second.prompt_tokens_details!.cached_tokens!;
    expect(shared).toBeGreaterThanOrEqual(1024);
    expect(shared % 128).toBe(0);
    // Shared bytes / 4, rounded down to the step: the system prompt and the tools, not the user's words.
    expect(shared).toBeLessThanOrEqual(second.prompt_tokens);
    expect(second.prompt_tokens - shared).toBeLessThan(128 + 10);
    // The first request again shares all of itself; a cache mark is no prompt text: marked, it is the same prompt.
    const again = (await usage([system, question])).prompt_tokens_details!.cached_tokens!;
    expect(again).toBeGreaterThan(shared);
    expect((await usage([system, question], true)).prompt_tokens_details?.cached_tokens).toBe(again);
    // The body is kept as sent, byte for byte.
    expect(server.requests[0]!.rawText).toBe(JSON.stringify(server.requests[0]!.rawBody));
  });

  it('accepts cache marks on text parts and tools, and refuses one of another type', async () => {
    const { client, server } = await start(() => ({ content: 'Sure.' }));
    const marked = {
      model: 'm',
      messages: [
        { role: 'system' as const, content: [{ type: 'text' as const, text: 'Static.', cache_control: { type: 'ephemeral' } }, { type: 'text' as const, text: 'Today.' }] },
        ...hello,
      ],
      tools: [{ type: 'function' as const, function: { name: 'hangup' }, cache_control: { type: 'ephemeral', ttl: '1h' } }],
    };
    await expect(client.chat.completions.create(marked)).resolves.toMatchObject({ object: 'chat.completion' });
    const wrong = { ...marked, tools: [{ ...marked.tools[0]!, cache_control: { type: 'forever' } }] };
    await expect(client.chat.completions.create(wrong)).rejects.toMatchObject({ status: 400 });
    expect(server.requests[1]!.validationError).toBe("Invalid value: 'forever'. Supported values are: 'ephemeral'.");
  });

  it('answers non-streaming requests with a chat.completion object', async () => {
    const { client } = await start(() => ({ content: 'Plain answer.', toolCalls: [{ name: 'hangup', arguments: '{}' }] }));
    const completion = await client.chat.completions.create({ model: 'hotline-demo', messages: hello });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe('Plain answer.');
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? call.function : undefined).toEqual({ name: 'hangup', arguments: '{}' });
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('passes the request and its index to the script', async () => {
    const seen: { index: number; last: unknown }[] = [];
    const { client } = await start((request, { index }) => {
      seen.push({ index, last: request.messages.at(-1)?.content });
      return { content: `reply ${index}` };
    });
    for (const word of ['one', 'two']) {
      await client.chat.completions.create({ model: 'hotline-demo', messages: [{ role: 'user', content: word }] });
    }
    expect(seen).toEqual([
      { index: 0, last: 'one' },
      { index: 1, last: 'two' },
    ]);
  });

  it('rejects a tool call without a tool response as OpenAI.BadRequestError', async () => {
    let scriptCalls = 0;
    const { server, client } = await start(() => {
      scriptCalls++;
      return { content: 'never' };
    });
    const messages: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Transfer me.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'transfer', arguments: '{}' } }],
      },
      { role: 'user', content: 'Hello?' },
    ];

    const error = await failureOf(client.chat.completions.create({ model: 'hotline-demo', messages, stream: true }));

    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const badRequest = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(badRequest.status).toBe(400);
    expect(badRequest.type).toBe('invalid_request_error');
    expect(badRequest.message).toContain(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_abc",
    );
    const request = await server.nextRequest();
    expect(request.status).toBe(400);
    expect(request.validationError).toContain('call_abc');
    expect(scriptCalls).toBe(0);
    expect(await request.ended).toBe('completed');
  });

  it.each<[string, unknown, string]>([
    ['missing model', { messages: [{ role: 'user', content: 'hi' }] }, 'you must provide a model parameter'],
    ['missing messages', { model: 'm' }, "Missing required parameter: 'messages'."],
    ['empty messages', { model: 'm', messages: [] }, "Invalid 'messages': empty array."],
    ['unknown role', { model: 'm', messages: [{ role: 'robot', content: 'hi' }] }, "Invalid value: 'robot'."],
    [
      'non-string user content',
      { model: 'm', messages: [{ role: 'user', content: 42 }] },
      "Invalid type for 'messages[0].content': expected one of a string or an array of objects, but got an integer instead.",
    ],
    [
      'bad content part',
      { model: 'm', messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] },
      "Invalid value: 'image_url'. Supported values are: 'text'.",
    ],
    [
      'assistant without content or tool calls',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant' }] },
      "Invalid value for 'content': expected a string, got null.",
    ],
    [
      'orphan tool message',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_x', content: 'ok' }] },
      "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
    ],
    [
      'tool message answering an unknown id',
      {
        model: 'm',
        messages: [
          { role: 'assistant', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'call_a', content: 'ok' },
          { role: 'tool', tool_call_id: 'call_b', content: 'ok' },
        ],
      },
      "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
    ],
    [
      'invalid tool call arguments in history',
      {
        model: 'm',
        messages: [
          { role: 'assistant', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'f', arguments: '{nope' } }] },
          { role: 'tool', tool_call_id: 'call_a', content: 'ok' },
        ],
      },
      "'messages[0].tool_calls[0].function.arguments'",
    ],
    [
      'malformed tool',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function' }] },
      "Missing required parameter: 'tools[0].function'.",
    ],
    [
      'tool with a bad name',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'a b' } }] },
      "Invalid 'tools[0].function.name': string does not match pattern.",
    ],
    [
      'tool of an unknown type',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'retrieval', function: { name: 'f' } }] },
      "Invalid value: 'retrieval'. Supported values are: 'function'.",
    ],
  ])('rejects %s with 400', async (_name, body, message) => {
    const { server, client } = await start(() => ({ content: 'never' }));
    const error = await failureOf(client.post('/chat/completions', { body }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain(message);
    const request = await server.nextRequest();
    expect(request.status).toBe(400);
    expect(request.validationError).toContain(message);
    expect(request.rawBody).toEqual(body);
  });

  it('accepts a complete tool-call round trip and text-part content', async () => {
    const { client } = await start(() => ({ content: 'Done.' }));
    const completion = await client.chat.completions.create({
      model: 'hotline-demo',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: 'Call two tools.' },
        {
          role: 'assistant',
          content: 'Sure.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
            { id: 'call_2', type: 'function', function: { name: 'b', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_2', content: 'ok' },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'ok' }] },
        { role: 'user', content: 'Thanks.' },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe('Done.');
  });

  it('answers invalid JSON with 400 and still records the request', async () => {
    const { server } = await start(() => ({ content: 'never' }));
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('We could not parse the JSON body');
    expect(server.requests[0]?.validationError).toContain('We could not parse the JSON body');
    expect(server.requests[0]?.rawBody).toBeUndefined();
  });

  it('surfaces 429 and 500 as the SDK error classes', async () => {
    const { client } = await start((_request, { index }) => (index === 0 ? { status: 429 } : { status: 500, errorMessage: 'boom' }));

    const rateLimited = await failureOf(client.chat.completions.create({ model: 'hotline-demo', messages: hello, stream: true }));
    expect(rateLimited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((rateLimited as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after-ms')).toBeNull();
    expect((rateLimited as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBeNull();

    const serverError = await failureOf(client.chat.completions.create({ model: 'hotline-demo', messages: hello, stream: true }));
    expect(serverError).toBeInstanceOf(OpenAI.InternalServerError);
    expect((serverError as Error).message).toBe('500 boom');
  });

  it('answers a throwing script with 500', async () => {
    const { server, client } = await start(() => {
      throw new Error('script bug');
    });
    const error = await failureOf(client.chat.completions.create({ model: 'hotline-demo', messages: hello, stream: true }));
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(server.requests[0]?.status).toBe(500);
    expect(server.requests[0]?.scriptError).toBe('script bug');
  });

  it('stops and reports aborted when the client aborts mid-stream', async () => {
    const { server, client } = await start(() => ({ content: 'one two three four five six seven eight', tokenDelayMs: 20 }), {
      ttftMs: 0,
    });
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'hotline-demo', messages: hello, stream: true },
      { signal: controller.signal },
    );
    const received: string[] = [];
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta.content;
      if (text) received.push(text);
      if (received.length === 2) controller.abort();
    }

    const request = await server.nextRequest();
    expect(await request.ended).toBe('aborted');
    expect(request.tokens.length).toBeLessThan(tokenize('one two three four five six seven eight').length);
  });

  it('hangs after the headers until the client aborts', async () => {
    const { server, client } = await start(() => ({ hang: true, content: 'never sent' }));
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'hotline-demo', messages: hello, stream: true },
      { signal: controller.signal },
    );
    const request = await server.nextRequest();
    expect(request.status).toBe(200);

    const iteration = collect(stream);
    controller.abort();
    // The SDK ends iteration quietly on a user abort; nothing was streamed.
    expect(await iteration).toEqual([]);
    expect(await request.ended).toBe('aborted');
    expect(request.tokens).toEqual([]);
  });

  it('breaks the stream after N tokens, so the SDK iteration throws', async () => {
    const { server, client } = await start(() => ({ content: 'one two three four five', breakAfterTokens: 3 }));
    const stream = await client.chat.completions.create({ model: 'hotline-demo', messages: hello, stream: true });
    const received: string[] = [];
    const iterate = async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    };

    await expect(iterate()).rejects.toThrow();
    const request = await server.nextRequest();
    expect(await request.ended).toBe('broken');
    expect(request.tokens.map((t) => t.text)).toEqual(['one', ' two', ' three']);
    expect(received.join('')).toBe('one two three');
  });

  it('records token write times on the performance clock and reports them through onToken', async () => {
    const seen: { token: string; at: number }[] = [];
    const { server, client } = await start(() => ({ content: 'Timed tokens here.' }), {
      ttftMs: 30,
      tokenDelayMs: 5,
      onToken: (_request, token, at) => seen.push({ token, at }),
    });
    const stream = await client.chat.completions.create({ model: 'hotline-demo', messages: hello, stream: true });
    await collect(stream);

    const request = await server.nextRequest();
    expect(await request.ended).toBe('completed');
    const times = request.tokens.map((t) => t.at);
    expect(request.tokens.map((t) => t.text)).toEqual(tokenize('Timed tokens here.'));
    expect(seen).toEqual(request.tokens.map((t) => ({ token: t.text, at: t.at })));
    // Timers may fire a little early relative to performance.now(); allow 2 ms of slack.
    expect(times[0]! - request.receivedAt).toBeGreaterThanOrEqual(28);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(3);
    expect(Math.abs(request.receivedAt - (performance.timeOrigin + performance.now()))).toBeLessThan(10_000);
  });

  it('hands out requests in order through nextRequest and by index', async () => {
    const { server, client } = await start((_request, { index }) => ({ content: `#${index}` }));
    const first = server.nextRequest();
    const third = server.nextRequest(2);
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'hotline-demo', messages: hello });
    expect((await first).index).toBe(0);
    expect((await server.nextRequest()).index).toBe(1);
    expect((await third).index).toBe(2);
    expect(server.requests.map((r) => r.index)).toEqual([0, 1, 2]);
  });

  it('also serves chat completions without the /v1 prefix', async () => {
    const { server } = await start(() => ({ content: 'No prefix.' }));
    const response = await fetch(`${server.baseURL.replace(/\/v1$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'hotline-demo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe('No prefix.');
  });

  it('lists the demo model', async () => {
    const { client } = await start(() => ({}));
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['hotline-demo']);
  });

  it('close() ends open keep-alive and hanging connections', async () => {
    const { server, client } = await start((_request, { index }) => (index === 0 ? { content: 'kept alive' } : { hang: true }));
    await client.chat.completions.create({ model: 'hotline-demo', messages: hello });
    // A non-streaming hang never resolves, so wait for the request to arrive instead.
    const stuck = client.chat.completions.create({ model: 'hotline-demo', messages: hello }).catch((error: unknown) => error);
    const request = await server.nextRequest(1);
    await server.close();
    expect(await request.ended).toBe('aborted');
    expect(await stuck).toBeInstanceOf(OpenAI.APIConnectionError);
  });
});
