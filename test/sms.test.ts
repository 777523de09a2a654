/**
 * Text messages (send_sms) over both transports, with real servers: a Hotline with SMS_MAX_PER_CALL,
 * the shipped templates (prompts/sms/) and test ones, a scripted model that calls send_sms as the
 * caller's words say — with a number of its own making, which must never be used — and a voice
 * service that answers a text with sms_failed. Every action Hotline sends is checked against the
 * production service's shapes.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { TEXT_FAILED_MARK } from '../src/call/caller-texts.js';
import type { BusinessTool, CallerText, TextSent, ToolRunContext } from '../src/call/ports/business-tools.js';
import { runSimulate } from '../src/cli/simulate.js';
import { demoScript } from '../src/demo/demo-script.js';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { ActionSchema, AnswerSchema } from '../src/protocol/actions.js';
import { parseSettings } from '../src/simulator/options.js';
import { startPlatformEmulator } from '../src/simulator/platform-emulator.js';
import { FakeVoiceService, type ReceivedAction } from '../src/testing/voice-service-client.js';
import { SmsTemplateStore } from '../src/tools/sms-template-store.js';
import { readSmsTemplates, SMS_MAX_CHARS } from '../src/tools/sms-templates.js';
import { SEND_SMS, smsToolBox } from '../src/tools/sms-tool.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';
import { dashboardCallPage, endCall, promptsWithTools, toolResults, transcriptLines, transcriptText } from './helpers/tool-calls.js';

vi.setConfig({ testTimeout: 20_000 });

const CALLER = '4915112345678';
const MADE_UP = '4930999999';
const ADMIN = 'sms-test-admin-token-0123456789';
const PAYLOAD = JSON.parse(await readFile(path.resolve('test/fixtures/service-payloads/actions/docs-send_sms.json'), 'utf8')) as Record<string, unknown>;
const APOLOGY = "I'm sorry, the text message did not go through.";
const ORDER_4711 = 'Your order 4711: see the link for its status. Follow it at https://shop.example.com/orders/4711';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The model of these tests: "text <json>" calls send_sms with that JSON as its arguments ("text twice
 * <json> <json>" makes two calls at once); a result is answered in one sentence; Hotline's note of a
 * failed text with APOLOGY.
 */
function model(request: ChatRequestBody): ScriptedReply {
  if ('response_format' in request && request.response_format) return { content: '{}' };
  const results = toolResults(request);
  if (results.length > 0) return { content: results.every((r) => r.startsWith('Sent')) ? 'I have sent it.' : 'It was not sent.' };
  const said = lastUserText(request);
  if (said.includes(TEXT_FAILED_MARK)) return { content: APOLOGY };
  const twice = /^text twice (\{.*\}) (\{.*\})$/.exec(said);
  if (twice) return { toolCalls: [{ name: SEND_SMS, arguments: twice[1]! }, { name: SEND_SMS, arguments: twice[2]! }] };
  const once = /^text (\{.*\})$/.exec(said);
  if (once) return { toolCalls: [{ name: SEND_SMS, arguments: once[1]! }] };
  return { content: 'Hello.' };
}

const textOrder = (order: string, extra: Record<string, unknown> = { phone_number: MADE_UP }): string =>
  `text ${JSON.stringify({ template: 'order-status', fields: { order_id: order }, ...extra })}`;

/** The shipped prompts (sms/ and de/sms/ included) with these files added or replaced; removed after the test. */
function prompts(files: Record<string, string> = {}): Promise<string> {
  return promptsWithTools({}, {}, (remove) => cleanups.push(remove)).then(async (dir) => {
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), text);
    }
    return dir;
  });
}

async function hotline(env: Record<string, string>, script = model): Promise<TestHotline> {
  const started = await startTestHotline(script, { ADMIN_TOKEN: ADMIN, ...env });
  cleanups.push(() => started.close());
  return started;
}

async function connect(env: TestHotline, playback: 'auto' | 'manual' = 'auto'): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(env.hotline.wsUrl, { playback: playback === 'auto' ? { kind: 'auto', msPerChar: 1 } : { kind: 'manual' } });
  cleanups.push(() => service.close());
  return service;
}

/** An action as Hotline sent it, without the time it arrived: what the service parses. */
function sent(action: ReceivedAction): Record<string, unknown> {
  const { receivedAt: _at, ...fields } = action;
  return fields;
}

/** Every action of the call passes the production service's schema; its text messages have the shape of the service's own example. */
function expectValidActions(actions: readonly ReceivedAction[]): void {
  for (const action of actions) {
    const parsed = ActionSchema.safeParse(sent(action));
    expect(parsed.success, `${JSON.stringify(sent(action))}: ${parsed.error?.message}`).toBe(true);
    if (action.type === 'send_sms') expect(Object.keys(sent(action)).sort()).toEqual(Object.keys(PAYLOAD).sort());
  }
}

function offered(env: TestHotline, request: number): string[] {
  return (env.llm.requests[request]?.body.tools ?? []).map((t) => t.function.name);
}

describe('send_sms over the WebSocket', () => {
  test("reaches only the caller's number, with the template filled; the model's own number is not used", async () => {
    const env = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '2' });
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say(textOrder('4711'));
    const sms = await service.nextOfType('send_sms');
    expect(sent(sms)).toEqual({ type: 'send_sms', session_id: service.sessionId, phone_number: CALLER, message: ORDER_4711 });
    expect((await service.nextOfType('speak')).text).toBe('I have sent it.');
    // Offered with the shipped templates; the model is told where it went, and that its number was not used.
    const [first, second] = [await env.llm.nextRequest(0), await env.llm.nextRequest(1)];
    const tool = first.body.tools?.find((t) => t.function.name === SEND_SMS);
    expect((tool?.function.parameters as { properties: { template: { enum: string[] } } }).properties.template.enum).toEqual(['directions', 'order-status']);
    expect(toolResults(second.body)[0]).toBe(`Sent to the caller's own phone: "${ORDER_4711}". (phone_number was not used: a text message goes to the caller's own number only.)`);
    await service.whenQuiet();
    await endCall(env, service);
    expectValidActions(service.actions);
    expect(service.actions.filter((a) => a.type === 'send_sms')).toHaveLength(1);
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.find((l) => l.text === 'sms_sent')).toMatchObject({ role: 'event', text: 'sms_sent', template: 'order-status', to: CALLER, message: ORDER_4711 });
    expect(lines.find((l) => l.role === 'tool')).toMatchObject({ name: SEND_SMS, outcome: 'ok', side_effect: true });
  });

  test('an outbound call texts the person called, not the line that called them', async () => {
    const env = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '1' });
    const service = await connect(env);
    service.start({ direction: 'outbound', from_phone_number: '4930123456', to_phone_number: '4917700000001' });
    await service.nextOfType('speak');
    service.say(`text ${JSON.stringify({ template: 'directions', to: MADE_UP })}`);
    const sms = await service.nextOfType('send_sms');
    expect(sms).toMatchObject({ phone_number: '4917700000001', message: expect.stringContaining('12 Market Street') });
    expect(sms.message).not.toMatch(/\s{2}|\n/);
    expectValidActions(service.actions);
  });

  test('at most SMS_MAX_PER_CALL: the one too many is refused to the model and not sent, and the tool is offered no more', async () => {
    const env = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '1' });
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    // Two at once: the first is sent, the second refused by the call itself.
    service.say(`text twice ${JSON.stringify({ template: 'order-status', fields: { order_id: '1' } })} ${JSON.stringify({ template: 'order-status', fields: { order_id: '2' } })}`);
    expect((await service.nextOfType('speak')).text).toBe('It was not sent.');
    const results = toolResults((await env.llm.nextRequest(1)).body);
    expect(results[0]).toMatch(/^Sent to the caller's own phone: "Your order 1: .*That was the last text message this call may send\.$/);
    expect(results[1]).toBe('Nothing was sent: this call has sent its one text message, the most one call may send.');
    await service.whenQuiet();
    service.say('Anything else?');
    await service.next((a) => a.text === 'Hello.');
    expect(offered(env, 0)).toContain(SEND_SMS);
    expect(offered(env, 2)).not.toContain(SEND_SMS);
    await service.whenQuiet();
    await endCall(env, service);
    expect(service.actions.filter((a) => a.type === 'send_sms').map((a) => a.message)).toEqual([expect.stringContaining('Your order 1:')]);
    expectValidActions(service.actions);
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.filter((l) => l.role === 'tool').map((l) => l.outcome)).toEqual(['ok', 'unavailable']);
  });

  test('not offered: SMS_MAX_PER_CALL unset (0), no template in sms/, or the caller withheld their number', async () => {
    const off = await hotline({ PROMPTS_DIR: await prompts() });
    const service = await connect(off);
    service.start();
    await service.nextOfType('speak');
    service.say('Hi');
    await service.next((a) => a.text === 'Hello.');
    expect(offered(off, 0)).toEqual(['speak', 'transfer', 'hangup']);

    const empty = await prompts();
    await rm(path.join(empty, 'sms'), { recursive: true });
    const noTemplates = await hotline({ PROMPTS_DIR: empty, SMS_MAX_PER_CALL: '2' });
    const second = await connect(noTemplates);
    second.start();
    await second.nextOfType('speak');
    second.say('Hi');
    await second.next((a) => a.text === 'Hello.');
    expect(offered(noTemplates, 0)).not.toContain(SEND_SMS);

    const on = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '2' });
    const withheld = await connect(on);
    withheld.start({ from_phone_number: 'anonymous' });
    await withheld.nextOfType('speak');
    withheld.say('Hi');
    await withheld.next((a) => a.text === 'Hello.');
    expect(offered(on, 0)).not.toContain(SEND_SMS);
  });

  test('a blank the call does not know and the model did not give: the model is told what is missing, nothing is sent', async () => {
    const env = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '2' });
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say(`text ${JSON.stringify({ template: 'order-status' })}`);
    expect((await service.nextOfType('speak')).text).toBe('It was not sent.');
    expect(toolResults((await env.llm.nextRequest(1)).body)).toEqual([
      'Nothing was sent: the template "order-status" needs order_id. Ask the caller if you do not know, then call send_sms again with fields {"order_id":"…"}.',
    ]);
    await service.whenQuiet();
    // A template that does not exist is not sent either.
    service.say(`text ${JSON.stringify({ template: 'voucher', fields: { code: 'X' } })}`);
    expect((await service.next((a) => a.type === 'speak')).text).toBe('It was not sent.');
    expect(toolResults((await env.llm.nextRequest(3)).body)).toEqual(['Nothing was sent: there is no template "voucher". The templates are directions, order-status.']);
    await service.whenQuiet();
    await endCall(env, service);
    expect(service.actions.some((a) => a.type === 'send_sms')).toBe(false);
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.some((l) => l.text === 'sms_sent')).toBe(false);
  });

  test("the service's sms_failed while the call is quiet: a turn at once, and the model's apology is the next speak; the note is no caller's words", async () => {
    const env = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '2' });
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say(textOrder('4711'));
    await service.nextOfType('send_sms');
    await service.next((a) => a.text === 'I have sent it.');
    await service.whenQuiet();
    service.send({ type: 'sms_failed', session: { id: service.sessionId }, error: 'sms not enabled for this account', phone_number: CALLER });
    expect((await service.nextOfType('speak')).text).toBe(APOLOGY);
    // The model read Hotline's note as a message of its own, after its last answer.
    const asked = await env.llm.nextRequest(2);
    const last = asked.body.messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content).toBe(
      `${TEXT_FAILED_MARK} (the service said: sms not enabled for this account). This note is from Hotline, not the caller's words: tell the caller in one short sentence that the text did not go through.]`,
    );
    await service.whenQuiet();
    await endCall(env, service);
    expectValidActions(service.actions);
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.find((l) => l.text === 'sms_failed')).toMatchObject({ role: 'event', template: 'order-status', reason: 'sms not enabled for this account' });
    // Neither the transcript nor the dashboard shows the note as something the caller said.
    expect(lines.filter((l) => l.role === 'user').map((l) => l.text)).toEqual([textOrder('4711')]);
    expect(await transcriptText(env, service.sessionId)).not.toContain(TEXT_FAILED_MARK);
    expect(await dashboardCallPage(env, service.sessionId, ADMIN)).not.toContain('could not be sent');
  });

  test('sms_failed while the answer still plays: the apology follows once it has played', async () => {
    const env = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '2' });
    const service = await connect(env, 'manual');
    service.start();
    await service.nextOfType('speak');
    service.finishSpeech();
    // A failure of a text this call never sent is no news for the model.
    service.send({ type: 'sms_failed', session: { id: service.sessionId } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(env.llm.requests).toHaveLength(0);
    service.say(textOrder('4711'));
    await service.nextOfType('send_sms');
    await service.next((a) => a.text === 'I have sent it.');
    service.send({ type: 'sms_failed', session: { id: service.sessionId } });
    // Nothing is said over the answer playing.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(service.actions.at(-1)?.text).toBe('I have sent it.');
    service.finishSpeech();
    expect((await service.nextOfType('speak')).text).toBe(APOLOGY);
    // Told once, however often the service says it.
    service.send({ type: 'sms_failed', session: { id: service.sessionId } });
    service.finishSpeech();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(env.llm.requests.filter((r) => lastUserText(r.body).includes(TEXT_FAILED_MARK))).toHaveLength(1);
    expectValidActions(service.actions);
  });

  test('with a redaction setting on, a card number in a field goes to the caller but never into the transcript', async () => {
    const dir = await prompts({ 'sms/reference.md': '---\ndescription: A payment reference.\n---\nYour payment reference: {{reference}}.\n' });
    const env = await hotline({ PROMPTS_DIR: dir, SMS_MAX_PER_CALL: '2', REDACT_CARDS: 'true' });
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say(`text ${JSON.stringify({ template: 'reference', fields: { reference: '4111 1111 1111 1111' } })}`);
    expect(await service.nextOfType('send_sms')).toMatchObject({ phone_number: CALLER, message: 'Your payment reference: 4111 1111 1111 1111.' });
    await service.next((a) => a.text === 'I have sent it.');
    await service.whenQuiet();
    await endCall(env, service);
    const written = await transcriptText(env, service.sessionId);
    expect(written).toContain('sms_sent');
    expect(written).not.toContain('4111 1111 1111 1111');
    expect(written).not.toContain('4111111111111111');
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.find((l) => l.text === 'sms_sent')?.message).toBe('Your payment reference: [card number].');
  });
});

describe('send_sms over the webhook', () => {
  async function post(env: TestHotline, event: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${env.hotline.url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
    const text = await res.text();
    const body = text ? (JSON.parse(text) as unknown) : undefined;
    // Every answer is one the production service accepts.
    if (body !== undefined) expect(AnswerSchema.safeParse(body).success, text).toBe(true);
    return { status: res.status, body };
  }

  test("the caller hears the answer first, the text goes to the caller's number with the next answer, and sms_failed brings the apology", async () => {
    const env = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '2' });
    const session = { id: 'webhook-sms-1', account_id: 'a', phone_number: '4930123456', direction: 'inbound', from_phone_number: CALLER, to_phone_number: '4930123456' };
    expect((await post(env, { type: 'session_start', session })).body).toMatchObject({ type: 'speak' });
    expect((await post(env, { type: 'assistant_speech_ended', session })).status).toBe(204);
    // The answer to the caller's words is words: the text message does not take their place.
    expect((await post(env, { type: 'user_speak', text: textOrder('4711'), session })).body).toMatchObject({ type: 'speak', text: 'I have sent it.' });
    const sms = await post(env, { type: 'assistant_speak', text: 'I have sent it.', duration_ms: 900, speech_started_at: 1, session });
    expect(sms.body).toEqual({ type: 'send_sms', session_id: session.id, phone_number: CALLER, message: ORDER_4711 });
    expect(Object.keys(sms.body as object).sort()).toEqual(Object.keys(PAYLOAD).sort());
    expect((await post(env, { type: 'sms_failed', session, reason: 'not delivered' })).status).toBe(204);
    expect((await post(env, { type: 'assistant_speech_ended', session })).body).toMatchObject({ type: 'speak', text: APOLOGY });
    expect((await post(env, { type: 'assistant_speech_ended', session })).status).toBe(204);
    await post(env, { type: 'session_end', session, reason: 'hangup' });
    await expect.poll(() => env.hotline.registry.size).toBe(0);
    await env.hotline.registry.whenRecorded();
    const lines = await transcriptLines(env, session.id);
    expect(lines.filter((l) => l.text === 'sms_sent' || l.text === 'sms_failed').map((l) => [l.text, l.to ?? l.reason])).toEqual([
      ['sms_sent', CALLER],
      ['sms_failed', 'not delivered'],
    ]);
  });

  test('a missing blank is told to the model, and no answer carries a text', async () => {
    const env = await hotline({ PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '1' });
    const session = { id: 'webhook-sms-2', account_id: 'a', phone_number: '4930123456', direction: 'inbound', from_phone_number: CALLER, to_phone_number: '4930123456' };
    const answers: unknown[] = [];
    const say = async (event: Record<string, unknown>) => answers.push((await post(env, { ...event, session })).body);
    await say({ type: 'session_start' });
    await say({ type: 'assistant_speech_ended' });
    await say({ type: 'user_speak', text: `text ${JSON.stringify({ template: 'order-status', phone_number: MADE_UP })}` });
    await say({ type: 'assistant_speak', text: 'It was not sent.', duration_ms: 500 });
    await say({ type: 'assistant_speech_ended' });
    expect(answers.at(-3)).toMatchObject({ type: 'speak', text: 'It was not sent.' });
    expect(answers.some((a) => (a as { type?: string } | undefined)?.type === 'send_sms')).toBe(false);
    expect(toolResults(env.llm.requests[1]!.body)[0]).toContain('needs order_id');
  });
});

describe('the send_sms tool and its templates', () => {
  async function templatesIn(files: Record<string, string>) {
    const dir = await prompts(files);
    return readSmsTemplates(dir);
  }

  function runWith(tool: BusinessTool, args: unknown, variables: Record<string, string | undefined>) {
    const texts: CallerText[] = [];
    const context: ToolRunContext = {
      variables,
      signal: new AbortController().signal,
      log: pino({ level: 'silent' }),
      textCaller: (text): TextSent => {
        texts.push(text);
        return { sent: true, left: 1 };
      },
    };
    return tool.run(JSON.stringify(args), context).then((result) => ({ result, texts }));
  }

  test("a call in German gets the German template (de or de-DE), any other the default; the call's variables win over the model's fields", async () => {
    const templates = await templatesIn({ 'sms/whoami.md': 'Hello {{name}}, from {{caller_number}}.\n', 'de/sms/whoami.md': 'Hallo {{name}}, von {{caller_number}}.\n' });
    expect(templates.problems).toEqual([]);
    const [tool] = smsToolBox(() => templates).tools();
    const german = await runWith(tool!, { template: 'directions' }, { language: 'de-DE', caller_number: CALLER });
    expect(german.texts[0]?.message).toMatch(/^Sie finden uns in der Marktstraße 12/);
    const english = await runWith(tool!, { template: 'directions' }, { language: 'fr', caller_number: CALLER });
    expect(english.texts[0]?.message).toMatch(/^Find us at 12 Market Street/);
    const named = await runWith(tool!, { template: 'whoami', fields: { name: 'Anna', caller_number: MADE_UP } }, { language: 'de', caller_number: CALLER });
    expect(named.texts[0]).toEqual({ template: 'whoami', message: `Hallo Anna, von ${CALLER}.` });
  });

  test('an edit is used without a restart: a new template, and a language folder that appears', async () => {
    const dir = await prompts();
    const store = await SmsTemplateStore.open(dir, pino({ level: 'silent' }), { watch: true, checkIntervalMs: 100 });
    cleanups.push(async () => store.close());
    expect([...store.templates.defaults.keys()]).toEqual(['directions', 'order-status']);
    await writeFile(path.join(dir, 'sms', 'voucher.md'), 'Your voucher: {{code}}\n');
    await expect.poll(() => [...store.templates.defaults.keys()], { timeout: 5000 }).toEqual(['directions', 'order-status', 'voucher']);
    await mkdir(path.join(dir, 'fr', 'sms'), { recursive: true });
    await writeFile(path.join(dir, 'fr', 'sms', 'voucher.md'), 'Votre bon : {{code}}\n');
    await expect.poll(() => store.templates.languages.get('fr')?.get('voucher')?.file, { timeout: 5000 }).toBe('fr/sms/voucher.md');
  });

  test('a message longer than a text may be is not sent; broken templates are left out with a reason, the rest are offered', async () => {
    const templates = await templatesIn({
      'sms/echo.md': 'You said: {{words}}\n',
      'sms/Bad Name.md': 'x\n',
      'sms/broken.md': 'Hello {{name\n',
      'sms/empty.md': '---\ndescription: nothing\n---\n\n',
      'sms/long.md': `${'x'.repeat(SMS_MAX_CHARS + 1)}\n`,
      'de/sms/only-german.md': 'Nur auf Deutsch.\n',
    });
    expect(templates.problems.map((p) => `${p.severity} ${p.file}`)).toEqual([
      'error sms/Bad Name.md',
      'error sms/broken.md',
      'error sms/empty.md',
      'error sms/long.md',
      'warning de/sms/only-german.md',
    ]);
    expect([...templates.defaults.keys()]).toEqual(['directions', 'echo', 'order-status']);
    const [tool] = smsToolBox(() => templates).tools();
    const long = await runWith(tool!, { template: 'echo', fields: { words: 'word '.repeat(40) } }, {});
    expect(long.texts).toEqual([{ template: 'echo', message: `You said: ${'word '.repeat(40).trim()}` }]);
    const overLimit = await templatesIn({ 'sms/three.md': '{{a}} {{b}} {{c}}\n' });
    const [three] = smsToolBox(() => overLimit).tools();
    const refused = await runWith(three!, { template: 'three', fields: { a: 'a'.repeat(200), b: 'b'.repeat(200), c: 'c'.repeat(200) } }, {});
    expect(refused.texts).toEqual([]);
    expect(refused.result).toEqual({ outcome: 'invalid', content: `Nothing was sent: the message would be 602 characters, more than the ${SMS_MAX_CHARS} a text message may have. Give shorter fields.` });
  });
});

describe('the demo model and the simulator', () => {
  test('npm run simulate -- --sms-fails: the text is shown (to, message), the service answers sms_failed, the demo model apologises', async () => {
    const env = await startTestHotline(demoScript, { PROMPTS_DIR: await prompts(), SMS_MAX_PER_CALL: '2' }, { ttftMs: 0, tokenDelayMs: 0 });
    cleanups.push(() => env.close());
    const lines: string[] = [];
    const input = Readable.from(['Can you text me the address?\n', 'bye\n']);
    // Quick speech, but the simulator's full wait for more after it: the apology follows the speech it comes after.
    const code = await runSimulate(['--url', env.hotline.wsUrl, '--wpm', '3000', '--sms-fails'], {}, { input, output: (line) => lines.push(line) });
    expect(code).toBe(0);
    const output = lines.join('\n');
    expect(output).toMatch(/^\+\d+ ms +send_sms +→ 4915100000000 · "Find us at 12 Market Street, right next to the station; .*"$/m);
    expect(output).toContain('✗ not sent (--sms-fails): the service answers sms_failed');
    expect(output).toContain("I'm sorry, the text message could not be sent.");
    expect(output.indexOf("I'm sorry, the text message could not be sent.")).toBeGreaterThan(output.indexOf('send_sms'));
  });

  test('the platform emulator with --sms-fails: the person called gets the text (shown), it fails, and hears why', async () => {
    const lines: string[] = [];
    let env: TestHotline | undefined;
    const emulator = await startPlatformEmulator({
      port: 0,
      hotlineUrl: () => env!.hotline.wsUrl,
      platformToken: 'platform-token-sms',
      voice: { wpm: 3000, smsFails: true },
      input: Readable.from(['Can you text me the address?\n']),
      output: (line) => lines.push(line),
    });
    cleanups.push(() => emulator.close());
    env = await startTestHotline(
      demoScript,
      {
        PROMPTS_DIR: await prompts(),
        SMS_MAX_PER_CALL: '1',
        VOICEMAIL_DETECTION: 'false',
        ADMIN_TOKEN: ADMIN,
        AIFLOW_API_URL: emulator.url,
        AIFLOW_ACCESS_TOKEN: 'platform-token-sms',
        AIFLOW_ID: 'flow-1',
        AIFLOW_BILLING_DEVICE: 'dev-1',
      },
      { ttftMs: 0, tokenDelayMs: 0 },
    );
    cleanups.push(() => env!.close());
    const placed = await fetch(`${env.hotline.url}/api/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ toPhoneNumber: '+49 151 1234567' }),
    });
    expect(placed.status).toBe(201);
    expect(await emulator.done).toBe(0);
    const output = lines.join('\n');
    expect(output).toMatch(/^\+\d+ ms +send_sms +→ 491511234567 · "Find us at 12 Market Street/m);
    expect(output).toContain('✗ not sent (--sms-fails): the service answers sms_failed');
    expect(output).toContain("I'm sorry, the text message could not be sent.");
  });

  test('--sms-fails is read with and without --platform', () => {
    expect(parseSettings(['--sms-fails'], {})).toMatchObject({ mode: 'call', voice: { smsFails: true } });
    expect(parseSettings(['--platform', '--sms-fails'], {})).toMatchObject({ mode: 'platform', voice: { smsFails: true } });
    expect(parseSettings([], {})).not.toHaveProperty('voice.smsFails');
  });

  test('the demo model texts when asked, and says so when it cannot', () => {
    const tools = [{ type: 'function' as const, function: { name: SEND_SMS, parameters: { type: 'object', properties: { template: { type: 'string', enum: ['directions', 'order-status'] } } } } }];
    const ask = (said: string, offer = true) => demoScript({ model: 'm', messages: [{ role: 'user', content: said }], ...(offer ? { tools } : {}) } as ChatRequestBody);
    expect(ask('Can you text me the address?')).toEqual({ toolCalls: [{ name: SEND_SMS, arguments: '{"template":"directions"}' }] });
    expect(ask('Schick mir eine SMS mit der Adresse')).toEqual({ toolCalls: [{ name: SEND_SMS, arguments: '{"template":"directions"}' }] });
    expect(ask('Please send me a text about order 4711')).toEqual({ toolCalls: [{ name: SEND_SMS, arguments: '{"template":"order-status","fields":{"order_id":"4711"}}' }] });
    expect(ask('Can you text me the address?', false).content).toMatch(/can't send text messages/);
    expect(ask(`${TEXT_FAILED_MARK}. This note is from Hotline.]`).content).toMatch(/^I'm sorry, the text message could not be sent/);
  });
});
