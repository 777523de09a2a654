/**
 * The dashboard's New campaign form over plain HTTP against a real Hotline: it creates a campaign
 * the way POST /api/campaigns does, lists every problem, and says what is missing before anyone types.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startOutboundService, type OutboundService } from './helpers/outbound-service.js';
import { scriptByUserText } from './helpers/scripts.js';

const ADMIN = 'dashboard-admin-token';
let env: TestHotline | undefined;
let service: OutboundService | undefined;

afterEach(async () => {
  await env?.close();
  await service?.close();
  env = undefined;
  service = undefined;
});

async function start(outbound: boolean): Promise<string> {
  service = outbound ? await startOutboundService() : undefined;
  env = await startTestHotline(scriptByUserText({}), { ADMIN_TOKEN: ADMIN, DEFAULT_COUNTRY_CODE: '49', ...service?.vars });
  const res = await fetch(`${env.hotline.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: ADMIN }).toString(),
  });
  return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
}

async function page(path: string, cookie: string): Promise<string> {
  return (await fetch(`${env!.hotline.url}${path}`, { headers: { cookie, accept: 'text/html' } })).text();
}

/** The form as a browser sends it: multipart, each text pasted or a file chosen. */
function send(parts: { definition?: string; definitionFile?: string; contacts?: string; contactsFile?: string }, cookie?: string): Promise<Response> {
  const form = new FormData();
  form.set('definition', parts.definition ?? '');
  form.set('definition_file', new Blob([parts.definitionFile ?? '']), parts.definitionFile === undefined ? '' : 'spring.yaml');
  form.set('contacts', parts.contacts ?? '');
  form.set('contacts_file', new Blob([parts.contactsFile ?? ''], { type: 'text/csv' }), parts.contactsFile === undefined ? '' : 'people.csv');
  return fetch(`${env!.hotline.url}/dashboard/campaigns/new`, { method: 'POST', redirect: 'manual', body: form, headers: cookie ? { cookie } : {} });
}

/** The campaigns stored, as the API lists them. */
async function campaignIds(): Promise<string[]> {
  const res = await fetch(`${env!.hotline.url}/api/campaigns`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return ((await res.json()) as { campaigns: { id: string }[] }).campaigns.map((c) => c.id);
}

describe('the New campaign form', () => {
  test('without outbound calling configured it names the variables missing before anyone types, and what is sent anyway is refused', async () => {
    const cookie = await start(false);
    const html = await page('/dashboard/campaigns', cookie);
    expect(html).toContain(
      '<p class="warning" role="alert" id="outbound-missing">Outbound calling is not configured: set <code>AIFLOW_API_URL</code>, <code>AIFLOW_ACCESS_TOKEN</code>, <code>AIFLOW_ID</code> and <code>AIFLOW_BILLING_DEVICE</code> and restart Hotline',
    );
    expect(html).toMatch(/<fieldset disabled/);

    const refused = await send({ definition: 'name: spring', contacts: 'phone\n+49 151 0000001\n' }, cookie);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(/<li>outbound calling is not configured: set AIFLOW_API_URL, AIFLOW_ACCESS_TOKEN, AIFLOW_ID and AIFLOW_BILLING_DEVICE/);
    expect(await campaignIds()).toEqual([]);
  });

  test('a definition pasted as YAML with its contacts as a file starts the campaign, duplicates merged and said so', async () => {
    const cookie = await start(true);
    const html = await page('/dashboard/campaigns', cookie);
    expect(html).not.toContain('outbound-missing');
    expect(html).toContain('<form method="post" action="campaigns/new" enctype="multipart/form-data" id="new-campaign-form">');

    const res = await send(
      { definition: 'name: spring check-in\nconcurrency: 2\n', contactsFile: 'phone,name\n+49 151 0000001,Anna\n0151 0000001,Anna again\n+49 151 0000002,Ben\n' },
      cookie,
    );
    expect(res.status).toBe(303);
    const [id] = await campaignIds();
    expect(res.headers.get('location')).toBe(`../campaigns?created=${id}&contacts=2&merged=1`);
    expect((await service!.requested(2)).sort()).toEqual(['491510000001', '491510000002']);
    const after = await page(`/dashboard/campaigns?created=${id}&contacts=2&merged=1`, cookie);
    expect(after).toContain('Campaign started with 2 contacts (1 duplicate row merged into the first with the same number).');
    expect(after).toMatch(new RegExp(`data-campaign="${id}"[\\s\\S]*?<td data-label="Contacts"><span>2<br><span class="muted">1 duplicate row merged</span></span></td>`));
  });

  test('a definition uploaded as a JSON file with contacts pasted works the same', async () => {
    const cookie = await start(true);
    const res = await send({ definitionFile: JSON.stringify({ name: 'json', aiFlowId: 'flow-2' }), contacts: 'phone\n+49 151 0000003\n' }, cookie);
    expect(res.status).toBe(303);
    expect(await service!.requested(1)).toEqual(['491510000003']);
    expect(service!.api.calls[0]!.aiFlowId).toBe('flow-2');
  });

  test('every problem is listed with where it is, the form comes back as sent, and nothing is created', async () => {
    const cookie = await start(true);
    const definition = 'name: <b>spring</b>\nconcurrency: 0\nstop_list: ["+49 151 0000009", "call Anna"]\n';
    const res = await send({ definition, contacts: 'phone,name,first name\n+49 151 0000001,Anna,A\nabc,Ben,B\n' }, cookie);
    expect(res.status).toBe(400);
    const html = await res.text();
    const problems = [...html.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]);
    expect(problems).toEqual([
      expect.stringMatching(/^concurrency: /),
      expect.stringMatching(/^stop_list\[1\]: Invalid phone number &quot;call Anna&quot;: it contains letters/),
      'contacts line 1: &quot;first name&quot; is not a variable name (letters, digits, _ . -)',
    ]);
    expect(html).toContain('Not started: 3 problems.');
    expect(html).toContain('name: &lt;b&gt;spring&lt;/b&gt;');
    expect(html).toContain('<a href="../campaigns"');
    expect(await campaignIds()).toEqual([]);
    expect(service!.numbers()).toEqual([]);

    const rows = await send({ definition: 'name: rows', contacts: 'phone,name\n+49 151 0000001,Anna\nabc,Ben\n\n0151 12,Clara\n' }, cookie);
    expect(rows.status).toBe(400);
    const listed = [...(await rows.text()).matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]);
    expect(listed).toEqual([
      expect.stringMatching(/^contacts line 3: Invalid phone number &quot;abc&quot;/),
      expect.stringMatching(/^contacts line 5: Invalid phone number &quot;0151 12&quot;: .*too few/),
    ]);

    const yaml = await send({ definition: 'name: [spring\n', contacts: 'phone\n+49 151 0000001\n' }, cookie);
    expect(yaml.status).toBe(400);
    expect(await yaml.text()).toMatch(/<li>definition: not valid YAML \(/);

    const file = await send({ definition: 'name: spring\ncontacts: people.csv\n' }, cookie);
    expect(file.status).toBe(400);
    expect(await file.text()).toContain('<li>contacts: &quot;people.csv&quot; names a file, which is not read here: paste its rows under Contacts, or choose the file there</li>');
    expect(await campaignIds()).toEqual([]);
  });

  test('without the session cookie nothing is created', async () => {
    await start(true);
    expect((await send({ definition: 'name: x', contacts: 'phone\n+49 151 0000001\n' })).status).toBe(401);
    expect(await campaignIds()).toEqual([]);
  });
});
