import { html, type Html } from '../../html.js';
import type { TranscriptLine } from '../transcript-lines.js';

/**
 * A transcript as a conversation: the caller and Hotline, what the caller heard
 * of an interrupted reply set apart from what was never spoken, keypad input,
 * tools with their hold lines. The story of an ended call and the page of a
 * call in progress show it alike.
 */
export function conversationList(lines: readonly TranscriptLine[]): Html {
  return html`<ol class="conversation">${lines.map(lineItem)}</ol>`;
}

function lineItem(line: TranscriptLine): Html {
  const at = line.ts ? html`<time datetime="${line.ts}">${line.ts.slice(11, 19)}</time>` : '';
  switch (line.role) {
    case 'user':
      return html`<li class="turn caller${line.mailbox ? ' mailbox' : ''}">${at}<span class="who">${line.mailbox ? 'Mailbox' : 'Caller'}${line.keypad ? html` <span class="badge">keypad</span>` : ''}</span><p>${line.text}</p></li>`;
    case 'assistant': {
      if (!line.interrupted) return html`<li class="turn agent">${at}<span class="who">Hotline</span><p>${line.text}</p></li>`;
      const generated = line.generated ?? line.text;
      const unheard = generated.startsWith(line.text) ? generated.slice(line.text.length).trim() : generated;
      return html`<li class="turn agent interrupted">${at}<span class="who">Hotline <span class="badge barge">interrupted</span></span>
        <p>${line.text ? html`<span class="heard" title="what the caller heard">${line.text}</span>` : ''}${unheard ? html` <span class="unheard" title="generated, never spoken">${unheard}</span>` : ''}</p></li>`;
    }
    case 'tool':
      return html`<li class="tool">${at}<span class="who">Tool <code>${line.name ?? '?'}</code></span>
        <span>${line.arguments ?? ''}</span> → <span>${line.text}</span>
        ${line.outcome ? html`<span class="badge outcome-${line.outcome}">${line.outcome}</span>` : ''}
        ${line.duration_ms !== undefined ? html`<span class="badge">${Math.round(line.duration_ms)} ms</span>` : ''}
        ${line.reused ? html`<span class="badge">reused</span>` : ''}
        ${line.hold_lines?.length ? html`<div class="muted hold">While it ran the caller heard: ${line.hold_lines.map((l, i) => html`${i > 0 ? ' · ' : ''}“${l}”`)}</div>` : ''}</li>`;
    case 'event':
      return html`<li class="event">${at}<span>${line.text.replaceAll('_', ' ')}${line.reason ? html` (${line.reason})` : ''}</span></li>`;
  }
}
