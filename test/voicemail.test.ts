/**
 * Voicemail detection on outbound calls: the phrases, the model's judgement
 * for what they are unsure of, voicemail.yaml with hot reload, and
 * prompts:check's report of it.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startScriptedLlmServer, type Script, type ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { createVoicemailDetector } from '../src/voicemail/detector.js';
import { parseJudgement } from '../src/voicemail/judge.js';
import { checkVoicemailFile, loadVoicemailPhrases } from '../src/voicemail/phrases-file.js';
import { VoicemailPhrasesStore } from '../src/voicemail/phrases-store.js';
import { normalizeSpeech } from '../src/voicemail/phrases.js';
import { CHILD_TEST_TIMEOUT_MS, childEnv, isolatedCwd, repoRoot, tsxArgs } from './helpers/child-process.js';

const run = promisify(execFile);
const silent = pino({ level: 'silent' });
const API_KEY = 'sk-voicemail-test-key-1234567890';
/** Long enough for a watched change to arrive on a busy machine; the tests wait for events, not for this. */
const CHANGE_TIMEOUT_MS = 5000;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'hotline-voicemail-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const servers: ScriptedLlmServer[] = [];
const stores: VoicemailPhrasesStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) store.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function llmServer(script: Script): Promise<ScriptedLlmServer> {
  const server = await startScriptedLlmServer({ script });
  servers.push(server);
  return server;
}

/** A logger whose lines the test can read. */
function capturedLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) }), lines };
}

let folders = 0;
async function promptsFolder(voicemailYaml?: string): Promise<string> {
  const dir = path.join(root, `prompts-${++folders}`);
  await mkdir(dir);
  if (voicemailYaml !== undefined) await writeFile(path.join(dir, 'voicemail.yaml'), voicemailYaml);
  return dir;
}

const never = new AbortController().signal;

describe('classify: the phrases', () => {
  const detector = createVoicemailDetector({ logger: silent });

  test.each([
    // English carriers and personal greetings.
    'The person you are trying to reach is not available. Please leave a message after the tone.',
    "Hi, you've reached Anna Schmidt. I can't take your call right now, please leave a message.",
    'The Google subscriber you have called is not available',
    'Hello, this is Anna. Sorry I missed your call, I will get back to you as soon as I can.',
    'Your call has been forwarded to an automatic voice message system.',
    // German: Telekom, Vodafone, O2 and personal ones.
    'Der gewünschte Gesprächspartner ist zurzeit nicht erreichbar. Sie können aber nach dem Signalton eine Nachricht hinterlassen.',
    'Hallo, hier ist die Mailbox von 0171 2345678.',
    'Hallo, hier ist die Mailbox von Anna Schmidt.',
    'Die Person, die Sie angerufen haben, ist im Moment nicht erreichbar',
    'Willkommen bei der Mailbox von Anna Schmidt.',
    'Der Teilnehmer ist zurzeit nicht erreichbar. Bitte versuchen Sie es später noch einmal.',
    'Hallo, hier ist Anna. Ich bin gerade nicht da, bitte sprich nach dem Piepton.',
    'Guten Tag, Sie sind verbunden mit dem Anrufbeantworter der Familie Weber.',
    'Hallo, ich bin im Moment nicht zu erreichen. Hinterlassen Sie eine Nachricht.',
    // Other languages.
    'La personne que vous essayez de joindre n’est pas disponible. Laissez un message après le bip.',
    'Bonjour, vous êtes bien sur la messagerie de Paul.',
    'El número que usted marcó no está disponible. Deje su mensaje después de la señal.',
    'Il cliente da lei chiamato non è raggiungibile. Lasci un messaggio dopo il segnale acustico.',
    'Hallo, u spreekt met de voicemail van Jan. Spreek een bericht in na de piep.',
  ])('a mailbox: %s', (greeting) => {
    expect(detector.classify(greeting)).toBe('voicemail');
  });

  test.each([
    'The person you are trying to reach',
    'The Google subscriber you have called',
    "Hi, you've reached Anna Schmidt.",
    'Der gewünschte Gesprächspartner',
    'Die Person, die Sie angerufen haben,',
    'Willkommen bei der Mailbox von',
    'Der Teilnehmer',
  ])('a mailbox already by the first segment a recogniser sends: %s', (segment) => {
    expect(detector.classify(segment)).toBe('voicemail');
  });

  test.each([
    'Hello?',
    'Hello, who is this?',
    "Hello, who's calling?",
    'Yes, this is Anna.',
    'Yes, Anna speaking',
    'Yeah?',
    'Hallo?',
    'Ja, Schmidt?',
    'Müller.',
    'Ja bitte?',
    'Schmidt hier.',
    'Anna Schmidt hier',
    'Guten Tag, hier ist Frau Weber.',
    'Hallo, wer ist da bitte?',
    'Weber am Apparat, was kann ich für Sie tun?',
    'Allô ?',
    'Oui, bonjour, qui est à l’appareil ?',
    '¿Hola, quién habla?',
    'Pronto, chi parla?',
    'Ja, met Jan de Vries.',
  ])('a person: %s', (answer) => {
    expect(detector.classify(answer)).toBe('human');
  });

  test('a plain "Hello?" is never a mailbox, however it is written', () => {
    for (const hello of ['Hello?', 'hello', 'HELLO!', 'Hello…', '  hello  ', 'Hello? Hello?']) expect(detector.classify(hello)).toBe('human');
  });

  test('"not available" from a person is taken for a mailbox on purpose: the short message is what they asked for', () => {
    expect(detector.classify("I'm not available right now, can you call back later?")).toBe('voicemail');
    expect(detector.classify('Ich bin gerade nicht erreichbar, ruf später an.')).toBe('voicemail');
  });

  test.each([
    'Thanks for calling Acme Corporation, our office hours are Monday to Friday from nine to five.',
    'Sorry, I am driving right now, what is it about?',
    'Good morning and welcome to the customer service of the city of Springfield.',
    '',
    '...',
  ])('unsure: %s', (words) => {
    expect(detector.classify(words)).toBe('unsure');
  });

  test('phrases match whole words only: "hi" is not in "this", "mailbox" is not in "mailboxes2go"', () => {
    const custom = createVoicemailDetector({ logger: silent, phrases: { voicemail: ['hi there'], human: [] } });
    expect(custom.classify('Well this there is something we should talk about, I think, yes')).toBe('unsure');
    expect(custom.classify('Welcome to Mailboxes2go, your shipping partner in the city center')).toBe('unsure');
  });

  test('text is normalised alike on both sides: case, punctuation, accents, umlauts, ß, apostrophes', () => {
    expect(normalizeSpeech('Grüß Gott! Nach dem SIGNALTON…')).toBe('gruss gott nach dem signalton');
    expect(normalizeSpeech("You’ve reached: Anna's phone")).toBe('youve reached annas phone');
    expect(normalizeSpeech('Après le bip, s’il vous plaît.')).toBe('apres le bip sil vous plait');
    expect(normalizeSpeech('¿Sí? ¡Dígame!')).toBe('si digame');
  });
});

describe('judge: the model, for what the phrases are unsure of', () => {
  const UNSURE = 'Thanks for calling Acme Corporation, our office hours are Monday to Friday from nine to five.';

  const detectorFor = (server: ScriptedLlmServer, logger: Logger = silent, timeoutMs?: number) =>
    createVoicemailDetector({ logger, llm: { apiKey: API_KEY, baseURL: server.baseURL, model: 'judge-model', timeoutMs } });

  test('one non-streaming request with the JSON schema, temperature 0 and the words; the answer decides', async () => {
    const server = await llmServer(() => ({ content: '{"answered_by":"voicemail"}' }));
    const detector = detectorFor(server);
    expect(detector.classify(UNSURE)).toBe('unsure');
    expect(await detector.judge(UNSURE, never)).toBe('voicemail');

    expect(server.requests).toHaveLength(1);
    const body = server.requests[0]!.rawBody as Record<string, unknown>;
    expect(body).toMatchObject({
      model: 'judge-model',
      temperature: 0,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'answered_by',
          strict: true,
          schema: {
            type: 'object',
            properties: { answered_by: { type: 'string', enum: ['voicemail', 'human'] } },
            required: ['answered_by'],
            additionalProperties: false,
          },
        },
      },
    });
    expect(body.stream ?? false).toBe(false);
    const messages = body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[0]!.content).toMatch(/outbound phone call/);
    expect(messages[1]!.content).toBe(UNSURE);
  });

  test('a person, said as JSON or as a plain word', async () => {
    const replies = ['{"answered_by": "human"}', 'human', 'Voicemail.'];
    const server = await llmServer((_body, { index }) => ({ content: replies[index] }));
    const detector = detectorFor(server);
    expect(await detector.judge(UNSURE, never)).toBe('human');
    expect(await detector.judge(UNSURE, never)).toBe('human');
    expect(await detector.judge(UNSURE, never)).toBe('voicemail');
  });

  test('replies read leniently: fenced JSON, JSON after reasoning; neither or both is no answer', () => {
    expect(parseJudgement('```json\n{"answered_by":"voicemail"}\n```')).toBe('voicemail');
    expect(parseJudgement('<think>a recorded greeting? no, a person</think>{"answered_by":"human"}')).toBe('human');
    expect(parseJudgement('"voicemail"')).toBe('voicemail');
    expect(parseJudgement('an answering machine')).toBe('voicemail');
    expect(parseJudgement('{"answered_by":"robot"}')).toBeUndefined();
    expect(parseJudgement('either a human or a voicemail')).toBeUndefined();
    expect(parseJudgement('I cannot tell.')).toBeUndefined();
    expect(parseJudgement('')).toBeUndefined();
    expect(parseJudgement(null)).toBeUndefined();
  });

  test('garbage, an error status or an unreachable model: a person, with a warning that never shows the key', async () => {
    const replies = [{ content: 'I cannot tell.' }, { status: 500 }, { status: 401 }];
    const server = await llmServer((_body, { index }) => replies[index] ?? {});
    const { logger, lines } = capturedLogger();
    const detector = detectorFor(server, logger);
    expect(await detector.judge(UNSURE, never)).toBe('human');
    expect(await detector.judge(UNSURE, never)).toBe('human');
    expect(await detector.judge(UNSURE, never)).toBe('human');
    const unreachable = createVoicemailDetector({
      logger,
      llm: { apiKey: API_KEY, baseURL: 'http://127.0.0.1:9/v1', model: 'judge-model' },
    });
    expect(await unreachable.judge(UNSURE, never)).toBe('human');

    const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string; status?: number }).filter((l) => l.level === 40);
    expect(warnings.map((w) => w.msg)).toEqual([
      'the voicemail judge answered neither voicemail nor human; taken as a person',
      'the voicemail judge failed; taken as a person',
      'the voicemail judge failed; taken as a person',
      'the voicemail judge failed; taken as a person',
    ]);
    expect(warnings.map((w) => w.status)).toEqual([undefined, 500, 401, undefined]);
    expect(lines.join('\n')).not.toContain(API_KEY);
  });

  test('a model that hangs: a person, within the time limit; the request is given up', async () => {
    const server = await llmServer(() => ({ hang: true }));
    const { logger, lines } = capturedLogger();
    const detector = detectorFor(server, logger, 150);
    const startedAt = performance.now();
    expect(await detector.judge(UNSURE, never)).toBe('human');
    const tookMs = performance.now() - startedAt;
    expect(tookMs).toBeGreaterThanOrEqual(140);
    expect(tookMs).toBeLessThan(1500);
    expect(await server.requests[0]!.ended).toBe('aborted');
    expect(lines.some((line) => line.includes('did not answer in time'))).toBe(true);
  });

  test('the call ending (its signal) stops waiting at once, long before the time limit', async () => {
    const server = await llmServer(() => ({ hang: true }));
    const detector = detectorFor(server, silent, 30_000);
    const call = new AbortController();
    const judged = detector.judge(UNSURE, call.signal);
    await server.nextRequest();
    call.abort();
    expect(await judged).toBe('human');
    expect(await server.requests[0]!.ended).toBe('aborted');
  });

  test('without a model: a person, and no request', async () => {
    const detector = createVoicemailDetector({ logger: silent });
    expect(await detector.judge(UNSURE, never)).toBe('human');
  });
});

describe('voicemail.yaml', () => {
  test('no file: nothing added, nothing wrong; prompts:check lists nothing', async () => {
    const dir = await promptsFolder();
    expect(await loadVoicemailPhrases(dir)).toMatchObject({ kind: 'absent' });
    expect(await checkVoicemailFile(dir)).toBeUndefined();
  });

  test('its phrases are added to the built-ins, normalised alike', async () => {
    const dir = await promptsFolder('voicemail:\n  - Bitte sprechen Sie JETZT!\n  - Welcome to the voicemail box of\nhuman:\n  - Bäckerei Rosa, guten Tag\n');
    const read = await loadVoicemailPhrases(dir);
    expect(read).toMatchObject({ kind: 'loaded', problems: [] });
    if (read.kind !== 'loaded') return;
    const detector = createVoicemailDetector({ logger: silent, phrases: read.phrases });
    expect(detector.classify('Herzlich willkommen. Bitte sprechen Sie jetzt.')).toBe('voicemail');
    expect(detector.classify('Baeckerei? Nein: Bäckerei Rosa, guten Tag, was darf es sein?')).toBe('human');
    // The built-ins still count.
    expect(detector.classify('Hello?')).toBe('human');
    expect(detector.classify('Please leave a message after the tone.')).toBe('voicemail');
    expect(await checkVoicemailFile(dir)).toEqual({ file: 'voicemail.yaml', summary: '2 voicemail phrases, 1 human phrase', problems: [] });
  });

  test('strict: every problem with its line; nothing of a broken file is used', async () => {
    const dir = await promptsFolder('voicemail:\n  - leave it\n  - 42\nhuman:\n  - "?!"\nhumans:\n  - hi\n');
    const read = await loadVoicemailPhrases(dir);
    expect(read.kind).toBe('broken');
    if (read.kind !== 'broken') return;
    expect(read.problems.map((p) => `${p.severity} ${p.message}`)).toEqual([
      'error line 3: voicemail[1]: a phrase must be text',
      'error line 5: human[0]: a phrase needs letters or digits: punctuation is ignored',
      'error line 6: humans: unknown key "humans"',
    ]);
    expect(await checkVoicemailFile(dir)).toEqual({ file: 'voicemail.yaml', summary: 'voicemail phrases (not loaded)', problems: read.problems });
  });

  test('YAML that does not parse, and an empty file, are problems too', async () => {
    const yaml = await loadVoicemailPhrases(await promptsFolder('voicemail: [leave\nhuman: x\n'));
    expect(yaml.kind === 'broken' && yaml.problems[0]?.message).toMatch(/^line \d+: YAML: /);
    const empty = await loadVoicemailPhrases(await promptsFolder(''));
    expect(empty.kind === 'broken' && empty.problems.map((p) => p.message)).toEqual(['the file is empty']);
  });

  test('a human phrase that holds a mailbox phrase is a warning: it would never decide anything', async () => {
    const dir = await promptsFolder('voicemail:\n  - out of office\nhuman:\n  - moin moin\n  - hello, Anna is not available\n  - out of office, but here\n');
    const read = await loadVoicemailPhrases(dir);
    expect(read.kind).toBe('loaded');
    expect(read.kind === 'loaded' && read.problems.map((p) => `${p.severity} ${p.message}`)).toEqual([
      'warning line 5: human[1]: "hello, Anna is not available" holds the mailbox phrase "not available", which decides first: this human phrase is never used',
      'warning line 6: human[2]: "out of office, but here" holds the mailbox phrase "out of office", which decides first: this human phrase is never used',
    ]);
  });
});

describe('the phrases store: hot reload', () => {
  async function open(dir: string): Promise<VoicemailPhrasesStore> {
    const store = await VoicemailPhrasesStore.open(dir, silent, { watch: true, checkIntervalMs: 200 });
    stores.push(store);
    return store;
  }

  /** Resolves at the store's next change; rejects if none comes in time, so a test never hangs. */
  function nextChange(store: VoicemailPhrasesStore): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the phrases did not change')), CHANGE_TIMEOUT_MS);
      store.onChange(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  test('an edit applies to a detector made before it; a broken edit keeps the last good phrases; deleting the file leaves the built-ins', async () => {
    const dir = await promptsFolder();
    const store = await open(dir);
    const detector = createVoicemailDetector({ logger: silent, phrases: () => store.current });
    const CUSTOM = 'Servus, grüß Gott, bitte sprechen Sie jetzt nach dem langen Ton, danke';
    expect(store.current).toEqual({ voicemail: [], human: [] });
    expect(detector.classify('bitte sprechen Sie jetzt, danke schön und auf Wiederhören')).toBe('unsure');

    let changed = nextChange(store);
    await writeFile(path.join(dir, 'voicemail.yaml'), 'voicemail:\n  - bitte sprechen Sie jetzt\n');
    await changed;
    expect(detector.classify(CUSTOM)).toBe('voicemail');
    const good = store.current;

    await writeFile(path.join(dir, 'voicemail.yaml'), 'voicemail:\n  - bitte sprechen Sie jetzt\nhuman: yes\n');
    const broken = await store.reload();
    expect(broken.ok).toBe(false);
    expect(broken.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      'voicemail.yaml: line 3: human: a list of phrases, one per line starting with "- "',
    ]);
    expect(store.current).toBe(good);
    expect(detector.classify(CUSTOM)).toBe('voicemail');

    changed = nextChange(store);
    await unlink(path.join(dir, 'voicemail.yaml'));
    await changed;
    expect(store.current).toEqual({ voicemail: [], human: [] });
    expect(detector.classify(CUSTOM)).toBe('unsure');
  });

  test('a broken file at startup: the built-ins alone, and the fix applies when it comes', async () => {
    const dir = await promptsFolder('voicemail:\n  - [nested]\n');
    const store = await open(dir);
    expect(store.current).toEqual({ voicemail: [], human: [] });
    const changed = nextChange(store);
    await writeFile(path.join(dir, 'voicemail.yaml'), 'human:\n  - moin moin\n');
    await changed;
    expect(store.current).toEqual({ voicemail: [], human: ['moin moin'] });
  });

  test('an unchanged file keeps the very same phrases, and tells nobody', async () => {
    const dir = await promptsFolder('human: [moin moin]\n');
    const store = await VoicemailPhrasesStore.open(dir, silent);
    stores.push(store);
    let told = 0;
    store.onChange(() => (told += 1));
    const before = store.current;
    expect(await store.reload()).toEqual({ ok: true, problems: [] });
    expect(store.current).toBe(before);
    expect(told).toBe(0);
  });
});

test(
  'npm run prompts:check lists voicemail.yaml when there is one, and counts its problems',
  async () => {
    const dir = await promptsFolder('voicemail:\n  - out of office\n  - bitte sprechen Sie jetzt\nhuman:\n  - moin moin\n  - hi: there\n');
    // The shipped prompt files, so that voicemail.yaml is the only problem; not the shipped tools.
    const shipped = path.join(repoRoot, 'prompts');
    await cp(shipped, dir, { recursive: true, filter: (source) => path.relative(shipped, source).split(path.sep)[0] !== 'tools' });
    const failure = await run(process.execPath, tsxArgs('src/cli/prompts-check.ts', dir), { cwd: isolatedCwd(), env: childEnv() }).then(
      () => expect.unreachable('prompts:check passed'),
      (error: unknown) => error as { code: number; stdout: string },
    );
    expect(failure.code).toBe(1);
    const lines = failure.stdout.trimEnd().split('\n');
    const at = lines.indexOf('voicemail.yaml: voicemail phrases (not loaded)');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe('  error: line 6: human[1]: a phrase must be text');
    expect(lines.at(-1)).toMatch(/^\d+ files, (\d+ evals, )?1 problem$/);

    await writeFile(path.join(dir, 'voicemail.yaml'), 'voicemail:\n  - out of office\n  - bitte sprechen Sie jetzt\nhuman:\n  - moin moin\n');
    const { stdout } = await run(process.execPath, tsxArgs('src/cli/prompts-check.ts', dir), { cwd: isolatedCwd(), env: childEnv() });
    expect(stdout).toContain('\nvoicemail.yaml: 2 voicemail phrases, 1 human phrase\n');
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ files, (\d+ evals, )?0 problems$/);
  },
  CHILD_TEST_TIMEOUT_MS,
);
