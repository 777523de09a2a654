/** Up to this width the dashboard is laid out for a phone (the stylesheet's and filters.js's one breakpoint). */
export const PHONE_MAX_WIDTH = 700;

/** The dashboard's one stylesheet: system fonts, no web fonts, nothing fetched from elsewhere. */
export const DASHBOARD_CSS = `
:root { --bg: #f6f7f9; --card: #fff; --ink: #1d2330; --muted: #667085; --line: #e4e7ec; --accent: #2f6fed;
  --caller: #eef4ff; --agent: #f2f8f1; --warn: #b54708; --bad: #b42318; --ok: #067647; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1.2rem; background: #121826; color: #fff; }
header a { color: #cfd6e4; text-decoration: none; }
header .brand { font-weight: 700; color: #fff; margin-right: 1rem; }
header nav { display: flex; flex-wrap: wrap; gap: .25rem; flex: 1; }
header nav a { padding: .3rem .7rem; border-radius: 6px; }
header nav a[aria-current="page"] { background: #2a3447; color: #fff; }
header form { margin: 0; }
header button { background: transparent; color: #cfd6e4; border: 1px solid #3a4459; border-radius: 6px; padding: .25rem .6rem; cursor: pointer; }
/* Wide enough for the calls table on any desktop. break-word, not anywhere: it breaks only a word that
   fits no line at all, and leaves a table cell's words whole (anywhere shrank cells to a letter's width). */
main { max-width: 1920px; margin: 0 auto; padding: 1.2rem; overflow-wrap: break-word; }
img, svg, canvas, select, input { max-width: 100%; }
.notice { background: #eef4ff; border-left: 3px solid var(--accent); padding: .5rem .8rem; }
h1 { font-size: 1.4rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
.count { display: inline-block; min-width: 1.6em; padding: 0 .4em; border-radius: 999px; background: var(--line); font-size: .9rem; text-align: center; vertical-align: middle; }
.muted { color: var(--muted); }
.warning { color: var(--warn); }
/* A demo call's cost: nothing was paid, and nothing is wrong. */
.demo { color: var(--muted); }
a { color: var(--accent); }
/* A table wider than its place scrolls in its own box, never the page. */
.table-scroll { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin: 0 0 .8rem; }
table.calls, table.grid { width: 100%; border-collapse: collapse; background: var(--card); }
table.calls th, table.calls td, table.grid th, table.grid td { padding: .4rem .6rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; overflow-wrap: normal; }
table.calls tbody tr:last-child td, table.grid tbody tr:last-child td { border-bottom: none; }
table.calls th, table.grid th { background: #fafbfc; font-weight: 600; color: var(--muted); font-size: .85rem; white-space: nowrap; }
table.calls tr.ended { opacity: .55; }
table.calls code { white-space: nowrap; }
/* The history: one line per call. Every value but the summary is one token; the summary takes the
   width left and ends in an ellipsis (its whole text in the cell's title). */
#history td { white-space: nowrap; vertical-align: middle; }
#history .cost { text-align: right; }
#history td.summary { width: 100%; max-width: 0; min-width: 16rem; overflow: hidden; text-overflow: ellipsis; }
#history td.summary .field { margin: 0 0 0 .3rem; }
/* Live calls: number, direction, duration and state one token each; what was said wraps between words. */
#live-calls td:nth-child(-n+4) { white-space: nowrap; }
#live-calls td:nth-child(n+5) { min-width: 14rem; }
#campaigns td { white-space: nowrap; }
#campaigns td[data-label="Outcomes"] { white-space: normal; min-width: 10rem; }
#audit td { white-space: nowrap; }
#audit td.detail { max-width: 28rem; overflow: hidden; text-overflow: ellipsis; }
.phase { font-weight: 600; }
.phase-greeting, .phase-speaking { color: var(--ok); } .phase-thinking, .phase-tool { color: var(--accent); }
.phase-transferring, .phase-ending { color: var(--warn); }
.reason { padding: .05rem .45rem; border-radius: 4px; background: var(--line); white-space: nowrap; }
.reason-error, .reason-connection_lost, .reason-cut_off { background: #fee4e2; color: var(--bad); }
.reason-transferred, .reason-voicemail, .reason-operator_transferred, .reason-operator_hung_up { background: #fef0c7; }
.field, .badge { display: inline-block; margin: .1rem .25rem .1rem 0; padding: 0 .4rem; border-radius: 4px; background: #eef2f6; font-size: .8rem; }
.badge.barge { background: #fee4e2; color: var(--bad); }
.badge.live { background: #dcfae6; color: var(--ok); vertical-align: middle; }
.now q { font-style: italic; }
details.filters { margin-bottom: .8rem; }
details.filters > summary { cursor: pointer; font-weight: 600; color: var(--muted); padding: .2rem 0; width: max-content; }
details.filters > form.filters { margin: .3rem 0 0; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem .9rem; align-items: end; background: var(--card); padding: .8rem; border: 1px solid var(--line); border-radius: 8px; margin-bottom: .8rem; }
form.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
input, select, button, .button { font: inherit; padding: .3rem .5rem; border: 1px solid #cfd4dc; border-radius: 6px; background: #fff; color: var(--ink); }
button, .button { cursor: pointer; text-decoration: none; }
form.filters button[type=submit] { background: var(--accent); color: #fff; border-color: var(--accent); }
#step-in form { display: inline-block; margin: 0 .75rem .5rem 0; }
#step-in button { background: var(--accent); color: #fff; border-color: var(--accent); }
#step-in button.danger { background: var(--bad); border-color: var(--bad); }
form.export { margin: 0 0 .8rem; }
form.inline { display: inline; }
nav.pager { display: flex; gap: 1rem; align-items: center; justify-content: center; margin: 1rem 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; background: var(--card); padding: .8rem 1rem; border: 1px solid var(--line); border-radius: 8px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.report-summary { background: var(--card); border-left: 3px solid var(--accent); padding: .6rem .9rem; margin: 0 0 .6rem; }
ol.conversation { list-style: none; padding: 0; margin: 0; display: flex; flex-direction: column; gap: .45rem; }
ol.conversation li { max-width: 78%; padding: .45rem .7rem; border-radius: 10px; background: var(--card); border: 1px solid var(--line); }
ol.conversation li p { margin: .15rem 0 0; }
ol.conversation time { float: right; margin-left: .8rem; color: var(--muted); font-size: .75rem; }
ol.conversation .who { font-size: .78rem; font-weight: 600; color: var(--muted); }
li.caller { align-self: flex-start; background: var(--caller); }
li.mailbox { background: #fdf6e3; }
li.agent { align-self: flex-end; background: var(--agent); }
li.agent.interrupted { border-color: #fda29b; }
.heard { } .unheard { color: #98a2b3; text-decoration: line-through; }
li.tool { align-self: center; max-width: 90%; font-size: .85rem; background: #f4f3ff; }
li.event { align-self: center; background: transparent; border: none; color: var(--muted); font-size: .8rem; }
ol.waterfall { list-style: none; padding: 0; margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
ol.waterfall li { display: grid; grid-template-columns: 260px 1fr 220px; gap: .8rem; align-items: center; padding: .35rem .7rem; border-bottom: 1px solid var(--line); }
ol.waterfall li:last-child { border-bottom: none; }
ol.waterfall .label { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-size: .85rem; }
ol.waterfall .track { position: relative; height: 16px; background: #f2f4f7; border-radius: 3px; }
ol.waterfall .bar { position: absolute; top: 0; bottom: 0; min-width: 2px; }
ol.waterfall .figure { font-size: .8rem; color: var(--muted); text-align: right; }
ol.waterfall .figure .tokens { display: block; }
.waterfall-axis { display: grid; grid-template-columns: 260px 1fr 220px; gap: .8rem; padding: .2rem calc(.7rem + 1px) 0; font-size: .75rem; color: var(--muted); }
.waterfall-axis .ticks { position: relative; height: 1.6rem; border-top: 1px solid #98a2b3; }
.waterfall-axis .tick { position: absolute; top: 0; padding-top: .3rem; white-space: nowrap; transform: translateX(-50%); }
.waterfall-axis .tick::before { content: ""; position: absolute; top: 0; left: 50%; height: .25rem; border-left: 1px solid #98a2b3; }
.waterfall-axis .tick.first { transform: none; } .waterfall-axis .tick.first::before { left: 0; }
.waterfall-axis .tick.last { transform: translateX(-100%); } .waterfall-axis .tick.last::before { left: auto; right: 0; }
.waterfall-axis .unit { text-align: right; }
ol.waterfall li.interrupted .figure { color: var(--bad); }
.stage-Hotline { background: #7a5af8; } .stage-LLM { background: #f79009; } .stage-sentence { background: #2e90fa; }
.stage-voice { background: #12b76a; } .stage-playing { background: #a6f4c5; }
.legend { display: inline-block; padding: 0 .35rem; border-radius: 3px; color: #fff; font-size: .75rem; }
.legend.stage-playing { color: var(--ink); }
.login { max-width: 360px; margin: 10vh auto; background: var(--card); padding: 1.5rem; border: 1px solid var(--line); border-radius: 10px; }
.login label { display: flex; flex-direction: column; gap: .3rem; margin-bottom: 1rem; }
.login button { width: 100%; background: var(--accent); color: #fff; border-color: var(--accent); }
figure { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .8rem; margin: 0 0 1rem; }
figcaption { font-weight: 600; margin-bottom: .4rem; }
.chart { position: relative; height: 300px; }

/* A phone: the navigation wraps under the name, tables become one card per row with each cell named. */
@media (max-width: ${PHONE_MAX_WIDTH}px) {
  header { padding: .5rem .75rem; }
  header .brand { margin-right: auto; }
  header nav { order: 3; flex: 1 0 100%; }
  header nav a { padding: .3rem .5rem; }
  main { padding: .8rem; }
  h1 { font-size: 1.2rem; }
  table.calls, table.calls tbody, table.calls tr, table.calls td { display: block; width: 100%; }
  table.calls thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.calls tr { padding: .45rem .7rem; border-bottom: 1px solid var(--line); }
  table.calls td { display: flex; gap: .6rem; padding: .1rem 0; border: none; }
  table.calls td[data-label]::before { content: attr(data-label); flex: 0 0 6.5rem; color: var(--muted); font-size: .8rem; white-space: nowrap; }
  /* A card has room for the summary's words, not for its length on one line. */
  #history td.summary { width: 100%; max-width: none; min-width: 0; white-space: normal; overflow: visible; }
  #history .cost { text-align: left; }
  #live-calls td:nth-child(n+5), #campaigns td[data-label="Outcomes"] { min-width: 0; }
  dl.facts { grid-template-columns: minmax(0, 1fr); gap: 0; }
  dl.facts dd { margin-bottom: .35rem; }
  ol.conversation li { max-width: 94%; }
  ol.waterfall li, .waterfall-axis { grid-template-columns: minmax(0, 1fr); gap: .2rem; }
  ol.waterfall .figure, .waterfall-axis .unit { text-align: left; }
  .waterfall-axis .spacer { display: none; }
  form.filters label { flex: 1 1 9rem; }
  #step-in form { display: block; }
}
`;
