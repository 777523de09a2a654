import { maskNumber } from '../phone/mask-number.js';
import { roleAtLeast, type StaffRole } from '../staff/roles.js';
import { html, type Html } from '../html.js';

export type Section = 'live' | 'calls' | 'campaigns' | 'charts' | 'prompts' | 'people' | 'audit';

/** Each section, and the least role that may open it (src/privacy/roles.ts). */
const SECTIONS: readonly [Section, string, string, StaffRole][] = [
  ['live', 'Live', '', 'operator'],
  ['calls', 'Calls', 'calls', 'viewer'],
  ['campaigns', 'Campaigns', 'campaigns', 'admin'],
  ['charts', 'Charts', 'charts', 'viewer'],
  ['prompts', 'Prompts', 'prompts', 'admin'],
  ['people', 'People', 'people', 'admin'],
  ['audit', 'Audit', 'audit', 'admin'],
];

export interface Page {
  title: string;
  /** The section the page belongs to, highlighted in the navigation; none on the login page. */
  section?: Section;
  /**
   * The way back to the dashboard's root from this page's URL ('' at the root, '../' one level
   * down): every link is relative, so the dashboard works under any prefix a reverse proxy adds.
   */
  root: string;
  body: Html;
  scripts?: readonly string[];
  /** Whether numbers are shown in full (the toggle in the header). */
  numbersShown?: boolean;
  /** This page's path below the root ('calls', 'calls/<id>'): where the numbers toggle comes back to. */
  here?: string;
  /** The role of whoever looks: the navigation offers what it may open (default admin). */
  role?: StaffRole | undefined;
}

export function layout(page: Page): Html {
  const { root } = page;
  const role = page.role ?? 'admin';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${page.title} · Hotline</title>
<link rel="icon" href="${root}assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${root}assets/dashboard.css">
</head>
<body>
<header>
  <a class="brand" href="${root || './'}">☎ Hotline</a>
  ${
    page.section === undefined
      ? ''
      : html`<nav>${SECTIONS.filter(([, , , least]) => roleAtLeast(role, least)).map(
          ([id, label, href]) => html`<a href="${root}${href || './'}"${id === page.section ? html` aria-current="page"` : ''}>${label}</a>`,
        )}</nav>
  ${
    roleAtLeast(role, 'operator')
      ? html`<form method="post" action="${root}numbers" class="numbers">
    <input type="hidden" name="back" value="${page.here ?? ''}">
    <button name="show" value="${page.numbersShown ? 'no' : 'yes'}" type="submit">${page.numbersShown ? 'Mask numbers' : 'Show numbers'}</button>
  </form>`
      : ''
  }
  <form method="post" action="${root}logout"><button type="submit">Log out</button></form>`
  }
</header>
<main>
${page.body}
</main>
${(page.scripts ?? []).map((src) => html`<script src="${root}assets/${src}" defer></script>`)}
</body>
</html>`;
}

/** A phone number as the dashboard shows it: masked in the middle unless the viewer asked for numbers. */
export function showNumber(number: string | null | undefined, shown: boolean): string {
  if (!number) return '—';
  return shown ? number : maskNumber(number);
}

export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const m = Math.floor(seconds / 60);
  return `${m}:${String(seconds % 60).padStart(2, '0')}`;
}

/** Dollars to a tenth of a cent, or the fraction of a cent a short call costs. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  return usd >= 0.01 ? `$${usd.toFixed(3)}` : `$${usd.toPrecision(2)}`;
}

/** A cost the store could not know (callCostUsd in llm/prices.ts): a dash, never $0. */
export const UNKNOWN_COST = '—';

/** An ISO time as "2026-11-23 05:12:03" (UTC: the server's logs and the database say UTC too). */
export function formatTime(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');
}
