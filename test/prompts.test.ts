import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { languageName } from '../src/language/language-tag.js';
import { BUILTIN_NAMES, builtinVariables } from '../src/prompts/builtins.js';
import { parseFrontMatter } from '../src/prompts/front-matter.js';
import { checkPromptsFolder, PromptStore, type PromptName, type PromptProblem } from '../src/prompts/prompt-store.js';
import { DEFAULT_PROMPT_SETTINGS as DEFAULTS } from './helpers/prompt-defaults.js';

import { childEnv, isolatedCwd, tsxArgs } from './helpers/child-process.js';

const run = promisify(execFile);
const logger = pino({ level: 'silent' });
const SHIPPED = path.resolve('prompts');
/** The shipped language folders, each a full set in its own voice. */
const LANGUAGE_SETS = [
  { name: 'German', dir: path.resolve('prompts/de'), tts: { provider: 'azure', language: 'de-DE', voice: 'de-DE-KatjaNeural' } },
  { name: 'Turkish', dir: path.resolve('prompts/tr'), tts: { provider: 'azure', language: 'tr-TR', voice: 'tr-TR-EmelNeural' } },
  { name: 'Arabic', dir: path.resolve('prompts/ar'), tts: { provider: 'azure', language: 'ar-SA', voice: 'ar-SA-ZariyahNeural' } },
] as const;
const ALL_SETS = [SHIPPED, ...LANGUAGE_SETS.map((set) => set.dir)];

const PROMPT_NAMES: readonly PromptName[] = [
  'system',
  'greeting',
  'outboundGreeting',
  'outboundGenericGreeting',
  'outboundVoicemail',
  'error',
  'transferFailed',
  'giveUpTransfer',
  'giveUp',
  'thinking',
  'thinkingAgain',
  'idleGoodbye',
  'shutdownGoodbye',
  'shutdownTransfer',
  'silenceReprompt',
  'silenceGoodbye',
  'toolHold',
  'toolHoldAgain',
];

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const GOOD: Record<string, string> = {
  'system.md': 'You are a test assistant. This is an {{direction}} call about {{topic|nothing in particular}}.\n',
  'greeting.md': 'Hello from the test!\n',
  'outbound-greeting.md': 'Hi {{name|there}}, about {{topic|your order}}.\n',
  'outbound-generic-greeting.md': 'Hello, we are calling.\n',
  'outbound-voicemail.md': 'Hi {{name|there}}, please call us back. Goodbye.\n',
  'error.md': "I'm sorry, something broke.\n",
  'transfer-failed.md': "I'm sorry, nobody is free.\n",
  'give-up-transfer.md': "I'm sorry, let me connect you.\n",
  'give-up.md': "I'm sorry, please call again later. Goodbye.\n",
  'thinking.md': 'One moment, please.\n',
  'thinking-again.md': 'Still thinking, one moment.\n',
  'idle-goodbye.md': 'Are you still there? Goodbye.\n',
  'shutdown-goodbye.md': 'We have to end the call for maintenance. Goodbye.\n',
  'shutdown-transfer.md': 'We have to hand you over now. One moment.\n',
  'operator-transfer.md': 'A colleague takes over now. One moment.\n',
  'operator-goodbye.md': 'We have to end the call now. Goodbye.\n',
  'silence-reprompt.md': 'Hello? Are you there?\n',
  'silence-goodbye.md': 'I cannot hear you. Goodbye.\n',
  'tool-hold.md': 'Let me look that up.\n',
  'tool-hold-again.md': 'Still looking, one moment.\n',
};

async function tempFolder(files: Record<string, string> = GOOD): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-prompts-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

async function openStore(dir: string, options: { watch?: boolean } = {}): Promise<PromptStore> {
  const store = await PromptStore.open(dir, logger, options);
  cleanups.push(() => store.close());
  return store;
}

/** The lines of the ConfigError that stops the start. */
async function startupError(dir: string): Promise<string[]> {
  const error = await PromptStore.open(dir, logger).then(
    () => expect.unreachable(`${dir} opened`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message.split('\n');
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function messages(problems: readonly PromptProblem[]): string[] {
  return problems.map((p) => `${p.file} ${p.severity}: ${p.message}`);
}

describe('shipped prompts', () => {
  test.each([['English', SHIPPED], ...LANGUAGE_SETS.map((set) => [set.name, set.dir])])('the %s set loads with no problems', async (_language, dir) => {
    const report = await checkPromptsFolder(dir);
    expect(report.files.flatMap((f) => messages(f.problems))).toEqual([]);
    expect(report.ok).toBe(true);
    // The shipped folder's vocabulary, pronunciations and language folders follow its own files.
    expect(report.files.map((f) => f.file).slice(0, 20)).toEqual([
      'system.md',
      'greeting.md',
      'outbound-greeting.md',
      'outbound-generic-greeting.md',
      'outbound-voicemail.md',
      'error.md',
      'transfer-failed.md',
      'give-up-transfer.md',
      'give-up.md',
      'thinking.md',
      'thinking-again.md',
      'idle-goodbye.md',
      'shutdown-goodbye.md',
      'shutdown-transfer.md',
      'operator-transfer.md',
      'operator-goodbye.md',
      'silence-reprompt.md',
      'silence-goodbye.md',
      'tool-hold.md',
      'tool-hold-again.md',
    ]);
    if (dir === SHIPPED) {
      expect(report.files.map((f) => f.file)).toEqual(
        expect.arrayContaining(['vocabulary.txt', 'pronunciations.yaml', 'de/', 'tr/', 'ar/', 'languages.yaml']),
      );
    } else {
      // A full set: every prompt file of its own, none left to the English folder.
      expect(report.files.map((f) => f.file)).toHaveLength(20);
    }
  });

  test.each(ALL_SETS)('%s: outbound calls get their reason; no prompt leaves a gap', async (dir) => {
    const prompts = (await openStore(dir)).current;
    const builtins = builtinVariables({ from: '4930123', to: '49151999', direction: 'outbound' }, new Date(), 'UTC');
    const outbound = { ...builtins, name: 'Anna', topic: 'your order 42' };
    expect(prompts.render('outboundGreeting', outbound)).toMatch(/Anna.*your order 42/);
    expect(prompts.render('system', outbound)).toContain('your order 42');
    for (const name of PROMPT_NAMES) {
      expect(prompts.wouldLeaveEmpty(name, builtins)).toBe(false);
      const text = prompts.render(name, builtins, (p) => expect.unreachable(`{{${p}}} in ${name}`));
      expect(text).not.toMatch(/\{\{|\}\}|^\s|\s$| {2}| [,.!?]/);
    }
    expect(prompts.placeholders.outboundGenericGreeting).toEqual([]);
    expect(prompts.settings).toEqual({
      ...DEFAULTS,
      // Each language set speaks in its own language's voice; the English one in the service's own.
      ...Object.fromEntries(LANGUAGE_SETS.filter((set) => set.dir === dir).map((set) => ['style', { tts: set.tts }])),
      silence: { timeoutSeconds: 8, reprompts: 2 },
      keypad: { endKey: '#', pauseMs: 3000, maxDigits: 20 },
    });
  });

  test.each(ALL_SETS)('%s: every commented-out example in system.md is valid once uncommented', async (dir) => {
    const text = await readFile(path.join(dir, 'system.md'), 'utf8');
    // Example lines are YAML ("# key: …" or indented); the explanations between them start with a capital.
    const uncommented = text.replace(/^# ((?:[a-z_]+:|\s+\S).*)$/gm, '$1');
    expect(uncommented).not.toBe(text);
    const result = parseFrontMatter(uncommented);
    expect(result.problems).toEqual([]);
    expect(result.settings).toMatchObject({ ssml: true, style: { tts: { provider: 'azure' }, barge_in: {}, vad: {} } });
    expect(result.settings.transfer).toMatchObject({ callerIdName: 'Hotline', callerIdNumber: '4930123456', timeoutSeconds: 30 });
    expect(result.audio).toEqual({ transfer: 'audio/transfer-chime.wav' });
    const copy = await tempFolder({ ...GOOD, 'system.md': uncommented });
    await cp(path.join(dir, 'audio'), path.join(copy, 'audio'), { recursive: true });
    expect((await openStore(copy)).current.audio('transfer')).toMatchObject({ file: 'audio/transfer-chime.wav', durationMs: 400 });
  });

  test.each(LANGUAGE_SETS)('the $name set tells the model to speak its language, by its own name for it', async ({ dir }) => {
    const prompts = (await openStore(dir)).current;
    const tag = path.basename(dir);
    const system = prompts.render('system', builtinVariables({ direction: 'inbound' }, new Date(), 'UTC'));
    expect(system).toContain(languageName(tag, tag));
    // The knowledge guidance is there, in that language: one paragraph for passages found, one for none.
    expect(system.split('\n\n')).toHaveLength(5);
  });

  test('the English lines other parts of Hotline rely on', async () => {
    const prompts = (await openStore(SHIPPED)).current;
    expect(prompts.render('greeting', {})).toBe('Hello, thanks for calling! How can I help you today?');
    expect(prompts.render('error', {})).toMatch(/^I'm sorry/);
  });
});

describe('front matter', () => {
  test('model, temperature and transfer targets, numbers as written', () => {
    const result = parseFrontMatter(
      '---\nmodel: gpt-4o-mini\ntemperature: 0.4\ntransfer_targets:\n  sales: 4930111111\n  office: 030123\n  intl: +4940222\n  support: "sip:help@example.com"\n---\nBody {{x|y}}\n',
    );
    expect(result.problems).toEqual([]);
    expect(result.settings).toEqual({
      ...DEFAULTS,
      model: 'gpt-4o-mini',
      temperature: 0.4,
      transferTargets: {
        sales: { number: '4930111111' },
        office: { number: '030123' },
        intl: { number: '+4940222' },
        support: { number: 'sip:help@example.com' },
      },
    });
    expect(result.body).toBe('Body {{x|y}}\n');
    expect(result.bodyLine).toBe(10);
  });

  test('no front matter, an empty one, and CRLF line ends', () => {
    expect(parseFrontMatter('Just text\n')).toEqual({ settings: DEFAULTS, audio: {}, body: 'Just text\n', bodyLine: 1, problems: [] });
    expect(parseFrontMatter('---\n---\nText')).toMatchObject({ body: 'Text', bodyLine: 3, problems: [] });
    expect(parseFrontMatter('---\r\nmodel: m\r\n---\r\nText')).toMatchObject({ settings: { model: 'm' }, body: 'Text', problems: [] });
  });

  test('an unknown key is a warning, not fatal', () => {
    const result = parseFrontMatter('---\nmodel: m\nvoice: anna\n---\nText');
    expect(result.settings.model).toBe('m');
    expect(result.problems).toEqual([{ severity: 'warning', message: expect.stringContaining('unknown front matter key "voice"') }]);
  });

  test.each([
    ['invalid YAML', '---\ntemperature: [not a number\n---\nText', /not valid YAML \(line \d\)/],
    ['a wrong type', '---\ntemperature: warm\n---\nText', /front matter temperature:/],
    ['a temperature out of range', '---\ntemperature: 3\n---\nText', /front matter temperature:/],
    ['a list instead of keys', '---\n- a\n---\nText', /key: value/],
    ['a target that is no number', '---\ntransfer_targets:\n  sales: 1.5\n---\nText', /transfer_targets\.sales/],
    ['a header never closed', '---\nmodel: m\nText', /never closed/],
  ])('%s is an error and sets nothing', (_what, text, message) => {
    const result = parseFrontMatter(text);
    expect(result.problems.filter((p) => p.severity === 'error').map((p) => p.message)).toEqual([expect.stringMatching(message)]);
    expect(result.settings).toEqual(DEFAULTS);
  });

  test('the store exposes the settings; an error in system.md stops the first load', async () => {
    const dir = await tempFolder({ ...GOOD, 'system.md': `---\ntemperature: 1.2\ntransfer_targets:\n  sales: 4930111111\n---\n${GOOD['system.md']}` });
    expect((await openStore(dir)).current.settings).toEqual({ ...DEFAULTS, temperature: 1.2, transferTargets: { sales: { number: '4930111111' } } });

    await writeFile(path.join(dir, 'system.md'), `---\ntemperature: [oops\n---\nText`);
    const failure = PromptStore.open(dir, logger);
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toThrow(new RegExp(`^PROMPTS_DIR ${escape(dir)}: system\\.md: front matter is not valid YAML`));
  });

  test('front matter in another file is read, not spoken; keys other than tts, barge_in and vad are warned about', async () => {
    const dir = await tempFolder({ ...GOOD, 'greeting.md': '---\nmodel: m\nvad: { end_of_turn_silence_ms: 600 }\n---\nHello' });
    const report = await checkPromptsFolder(dir);
    expect(messages(report.files.flatMap((f) => f.problems))).toEqual([
      'greeting.md warning: unknown front matter key "model" is ignored (known here: tts, barge_in, vad; the settings of the whole call belong in system.md)',
    ]);
    const prompts = (await openStore(dir)).current;
    expect(prompts.render('greeting', {})).toBe('Hello');
    expect(prompts.style('greeting')).toEqual({ vad: { end_of_turn_silence_ms: 600 } });
  });
});

describe('built-in variables', () => {
  const now = new Date('2026-11-22T13:05:00Z');

  test('date, time and weekday in the given zone; numbers and direction from the session', () => {
    expect(builtinVariables({ from: '4930123', to: '4940456', direction: 'inbound' }, now, 'Europe/Berlin')).toEqual({
      caller_number: '4930123',
      called_number: '4940456',
      direction: 'inbound',
      date: 'Sunday, 22 November 2026',
      time: '14:05',
      weekday: 'Sunday',
    });
    expect(builtinVariables({ direction: 'outbound' }, new Date('2026-11-22T23:30:00Z'), 'Asia/Tokyo')).toEqual({
      direction: 'outbound',
      date: 'Monday, 23 November 2026',
      time: '08:30',
      weekday: 'Monday',
    });
    expect(Object.keys(builtinVariables({ from: 'a', to: 'b', direction: 'inbound', language: 'de' }, now, 'UTC')).sort()).toEqual(
      [...BUILTIN_NAMES].sort(),
    );
  });

  test('midnight is 00, and anything but outbound is inbound', () => {
    const vars = builtinVariables({ direction: 'sideways' }, new Date('2026-01-01T00:07:00Z'), 'UTC');
    expect(vars).toMatchObject({ time: '00:07', direction: 'inbound', date: 'Thursday, 1 January 2026' });
  });

  test('an invalid zone falls back to UTC instead of throwing', () => {
    expect(builtinVariables({}, now, 'Mars/Olympus_Mons')).toMatchObject({ time: '13:05', weekday: 'Sunday' });
  });

  test('without a zone argument, TZ decides', () => {
    vi.stubEnv('TZ', 'America/New_York');
    cleanups.push(() => vi.unstubAllEnvs());
    expect(builtinVariables({}, now).time).toBe('08:05');
  });
});

describe('the store', () => {
  test('renders with the variables of one call; a missing value is reported, not thrown', async () => {
    const prompts = (await openStore(await tempFolder())).current;
    expect(prompts.render('system', { direction: 'outbound', topic: 'cake' })).toBe(
      'You are a test assistant. This is an outbound call about cake.',
    );
    const missing: string[] = [];
    expect(prompts.render('system', {}, (p) => missing.push(p))).toBe(
      'You are a test assistant. This is an  call about nothing in particular.',
    );
    expect(missing).toEqual(['direction']);
    expect(prompts.placeholders.system).toEqual(['direction', 'topic']);
  });

  test('wouldLeaveEmpty tells whether the tailored greeting can be used', async () => {
    const dir = await tempFolder({ ...GOOD, 'outbound-greeting.md': 'Hi {{name}}, about {{topic|your order}}.' });
    const prompts = (await openStore(dir)).current;
    expect(prompts.wouldLeaveEmpty('outboundGreeting', { topic: 'x' })).toBe(true);
    expect(prompts.wouldLeaveEmpty('outboundGreeting', { name: 'Anna' })).toBe(false);
    expect(prompts.wouldLeaveEmpty('outboundGenericGreeting', {})).toBe(false);
  });

  test('missing optional files fall back to built-in defaults; missing required ones stop the start', async () => {
    const dir = await tempFolder({ 'system.md': GOOD['system.md']!, 'greeting.md': GOOD['greeting.md']! });
    const prompts = (await openStore(dir)).current;
    expect(prompts.render('error', {})).toMatch(/^I'm sorry/);
    expect(prompts.render('outboundGreeting', { name: 'Anna' })).toMatch(/^Hi Anna,/);
    expect(prompts.render('outboundGenericGreeting', {})).not.toMatch(/\{\{/);

    await rm(path.join(dir, 'greeting.md'));
    await expect(PromptStore.open(dir, logger)).rejects.toThrow(/greeting\.md: is missing/);
  });

  test('an unusable folder stops the start with one line per problem, naming PROMPTS_DIR and the fix', async () => {
    const dir = await tempFolder({ ...GOOD, 'system.md': 'You help.\nSay {{ bad name }} and {{oops\n' });
    await rm(path.join(dir, 'greeting.md'));
    expect(await startupError(dir)).toEqual([
      `PROMPTS_DIR ${dir}: system.md: line 2, column 5: invalid placeholder name "bad name": use letters, digits, _ . - and start with a letter or _`,
      `PROMPTS_DIR ${dir}: system.md: line 2, column 24: unclosed "{{": a placeholder needs "}}" on the same line`,
      `PROMPTS_DIR ${dir}: greeting.md: is missing; Hotline needs system.md and greeting.md to start (the shipped ones are in ./prompts)`,
    ]);

    const fix = 'set PROMPTS_DIR to the folder with system.md and greeting.md (the shipped one is ./prompts)';
    expect(await startupError(path.join(dir, 'nope'))).toEqual([`PROMPTS_DIR ${path.join(dir, 'nope')} does not exist: ${fix}`]);
    const file = path.join(dir, 'error.md');
    expect(await startupError(file)).toEqual([`PROMPTS_DIR ${file} is not a folder: ${fix}`]);
  });

  test('a broken optional file falls back at start, but never replaces a good version on reload', async () => {
    const dir = await tempFolder({ ...GOOD, 'error.md': 'Sorry {{oops' });
    const store = await openStore(dir);
    expect(store.current.render('error', {})).toMatch(/^I'm sorry, I'm having a little trouble/);

    await writeFile(path.join(dir, 'error.md'), 'Sorry, edited.');
    expect(await store.reload()).toEqual({ ok: true, problems: [] });
    expect(store.current.render('error', {})).toBe('Sorry, edited.');

    await writeFile(path.join(dir, 'error.md'), 'Sorry {{oops');
    const result = await store.reload();
    expect(result.ok).toBe(false);
    expect(messages(result.problems)).toEqual(['error.md error: line 1, column 7: unclosed "{{": a placeholder needs "}}" on the same line']);
    expect(store.current.render('error', {})).toBe('Sorry, edited.');
  });

  test('hot reload: an edit applies by itself; a broken edit keeps the last good version', async () => {
    const dir = await tempFolder();
    const store = await openStore(dir, { watch: true });
    const first = store.current;

    // Saved the way editors do it: a temporary file renamed over the old one.
    await writeFile(path.join(dir, '.greeting.md.tmp'), 'Welcome, edited!\n');
    await rename(path.join(dir, '.greeting.md.tmp'), path.join(dir, 'greeting.md'));
    await expect.poll(() => store.current.render('greeting', {}), { timeout: 5000 }).toBe('Welcome, edited!');
    // A call in progress keeps the version it started with.
    expect(first.render('greeting', {})).toBe('Hello from the test!');
    const edited = store.current;

    await writeFile(path.join(dir, 'system.md'), `---\ntemperature: hot\n---\n${GOOD['system.md']}`);
    await writeFile(path.join(dir, 'greeting.md'), 'A second edit.\n');
    const result = await store.reload();
    expect(result.ok).toBe(false);
    expect(messages(result.problems)).toEqual([expect.stringMatching(/^system\.md error: front matter temperature:/)]);
    expect(store.current).toBe(edited);
    expect(store.current.render('greeting', {})).toBe('Welcome, edited!');

    // Fixing the file is picked up by the watcher again.
    await writeFile(path.join(dir, 'system.md'), GOOD['system.md']!);
    await vi.waitFor(() => expect(store.current.render('greeting', {})).toBe('A second edit.'), { timeout: 5000 });
  });

  test('a required file missing during a reload keeps the last good version', async () => {
    const dir = await tempFolder();
    const store = await openStore(dir);
    const before = store.current;
    await rm(path.join(dir, 'system.md'));
    expect(await store.reload()).toMatchObject({ ok: false, problems: [{ file: 'system.md', severity: 'error' }] });
    expect(store.current).toBe(before);
  });

  test('after close() the store stays usable and reloads on request', async () => {
    const dir = await tempFolder();
    const store = await openStore(dir, { watch: true });
    store.close();
    store.close();
    await writeFile(path.join(dir, 'greeting.md'), 'Reloaded by hand.\n');
    expect(await store.reload()).toEqual({ ok: true, problems: [] });
    expect(store.current.render('greeting', {})).toBe('Reloaded by hand.');
  });
});

describe('checkPromptsFolder', () => {
  test('reports every file with its placeholders and problems', async () => {
    const dir = await tempFolder({
      'system.md': '---\nmodel: m\ncolour: blue\n---\nYou help.\nIt is {{time}} and {{TIME}}; call {{customer}}.\n',
      'greeting.md': 'Hello {{name}}, {{name}} again. And {{ bad name }}.',
      'outbound-generic-greeting.md': 'Hello {{name}}.',
      'error.md': '',
      'greting.md': 'A typo.',
      'README.md': 'Docs about the prompts.',
    });
    const report = await checkPromptsFolder(dir);
    expect(report.ok).toBe(false);
    expect(report.files.map((f) => [f.file, f.placeholders])).toEqual([
      ['system.md', ['time', 'TIME', 'customer']],
      ['greeting.md', []],
      ['outbound-greeting.md', []],
      ['outbound-generic-greeting.md', ['name']],
      ['outbound-voicemail.md', []],
      ['error.md', []],
      ['transfer-failed.md', []],
      ['give-up-transfer.md', []],
      ['give-up.md', []],
      ['thinking.md', []],
      ['thinking-again.md', []],
      ['idle-goodbye.md', []],
      ['shutdown-goodbye.md', []],
      ['shutdown-transfer.md', []],
      ['operator-transfer.md', []],
      ['operator-goodbye.md', []],
      ['silence-reprompt.md', []],
      ['silence-goodbye.md', []],
      ['tool-hold.md', []],
      ['tool-hold-again.md', []],
      ['greting.md', []],
    ]);
    expect(messages(report.files.flatMap((f) => f.problems))).toEqual([
      expect.stringMatching(/^system\.md warning: unknown front matter key "colour"/),
      expect.stringMatching(/^system\.md warning: line 6, column 35: \{\{customer\}\} is not a built-in variable and has no default/),
      expect.stringMatching(/^greeting\.md error: line 1, column 37: invalid placeholder name "bad name"/),
      'outbound-greeting.md warning: is missing; the built-in default is used',
      expect.stringMatching(/^outbound-generic-greeting\.md warning: line 1, column 7: \{\{name\}\} is not a built-in/),
      'outbound-voicemail.md warning: is missing; the built-in default is used',
      'error.md warning: is empty; the built-in default is used',
      'transfer-failed.md warning: is missing; the built-in default is used',
      'give-up-transfer.md warning: is missing; the built-in default is used',
      'give-up.md warning: is missing; the built-in default is used',
      'thinking.md warning: is missing; the built-in default is used',
      'thinking-again.md warning: is missing; the built-in default is used',
      'idle-goodbye.md warning: is missing; the built-in default is used',
      'shutdown-goodbye.md warning: is missing; the built-in default is used',
      'shutdown-transfer.md warning: is missing; the built-in default is used',
      'operator-transfer.md warning: is missing; the built-in default is used',
      'operator-goodbye.md warning: is missing; the built-in default is used',
      'silence-reprompt.md warning: is missing; the built-in default is used',
      'silence-goodbye.md warning: is missing; the built-in default is used',
      'tool-hold.md warning: is missing; the built-in default is used',
      'tool-hold-again.md warning: is missing; the built-in default is used',
      expect.stringMatching(/^greting\.md warning: is not read by Hotline/),
    ]);
  });
});

describe('npm run prompts:check', () => {
  const cli = (dir: string) => run(process.execPath, tsxArgs('src/cli/prompts-check.ts', dir), { cwd: isolatedCwd(), env: childEnv() });

  test('a good folder: every file listed, exit 0', async () => {
    const { stdout } = await cli(await tempFolder());
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toContain('system.md: {{direction}} {{topic}}');
    expect(lines).toContain('greeting.md: (no placeholders)');
    expect(lines.at(-1)).toBe('20 files, 0 problems');
  }, 30_000);

  test('a folder with problems: problems indented under their file, exit 1', async () => {
    const dir = await tempFolder({ ...GOOD, 'greeting.md': 'Hello {{name}}', 'error.md': 'Sorry {{' });
    await mkdir(path.join(dir, 'examples'));
    const failure = await cli(dir).then(
      () => undefined,
      (error: unknown) => error as { code: number; stdout: string },
    );
    expect(failure?.code).toBe(1);
    const lines = failure!.stdout.trimEnd().split('\n');
    const at = lines.indexOf('greeting.md: {{name}}');
    expect(lines[at + 1]).toMatch(/^ {2}warning: line 1, column 7: \{\{name\}\} is not a built-in variable/);
    expect(lines).toContain('error.md: (no placeholders)');
    expect(lines[lines.indexOf('error.md: (no placeholders)') + 1]).toMatch(/^ {2}error: line 1, column 7: unclosed/);
    expect(lines.at(-1)).toBe('20 files, 2 problems');
  }, 30_000);
});
