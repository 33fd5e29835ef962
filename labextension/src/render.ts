/**
 * DOM rendering of transcript blocks inside JupyterLab.
 *
 * Mirrors the HTML fallback (penguin_jupyter/notebook/transcript/transcript_html.py): header, collapsed
 * thinking, Markdown text (JupyterLab's parser + sanitizer; a long user message folded after its
 * head, model.ts `foldText`), tool cards with command / diff /
 * arguments / approval / output (long output collapsed, expandable), events, nested subagents,
 * usage. Every model string goes in through textContent unless it passed the sanitizer and
 * then the allow-list rebuild of nofetch.ts (remote images become click-to-open placeholders).
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';
import {
  Block,
  Bundle,
  buildBlocks,
  BUNDLE_VERSION,
  costText,
  foldText,
  readBundle,
  ToolCard,
  withSavedImages
} from './model';
import { imageNode, safeFragment, safeHtml } from './nofetch';
import { undoControl } from './undo_control';

export const OUTPUT_HEAD_LINES = 12;

type Child = Node | string | null | undefined | false;

/** How headers name a session: ids already read `session-…`, so only others get the word. */
export function sessionLabel(sessionId: string): string {
  return sessionId.startsWith('session-') ? sessionId : `session ${sessionId}`;
}

function el(tag: string, className?: string, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

function details(summary: string, className: string, open: boolean, ...children: Child[]): HTMLElement {
  const node = el('details', className, el('summary', '', summary), ...children);
  (node as HTMLDetailsElement).open = open;
  return node;
}

function collapsiblePre(text: string, className = 'pg-output'): HTMLElement {
  const lines = text.split('\n');
  if (lines.length <= OUTPUT_HEAD_LINES) {
    return el('pre', className, text);
  }
  const more = lines.length - OUTPUT_HEAD_LINES;
  return el(
    'div',
    'pg-output-long',
    el('pre', className, lines.slice(0, OUTPUT_HEAD_LINES).join('\n')),
    details(`… ${more} more line${more !== 1 ? 's' : ''}`, 'pg-output-more', false,
      el('pre', className, lines.slice(OUTPUT_HEAD_LINES).join('\n')))
  );
}

function diffPre(text: string): HTMLElement {
  const pre = el('pre', 'pg-diff');
  text.split('\n').forEach((line, index) => {
    if (index) {
      pre.appendChild(document.createTextNode('\n'));
    }
    let css = '';
    if (line.startsWith('+++') || line.startsWith('---')) {
      css = 'pg-diff-file';
    } else if (line.startsWith('+')) {
      css = 'pg-diff-add';
    } else if (line.startsWith('-')) {
      css = 'pg-diff-del';
    } else if (line.startsWith('@@')) {
      css = 'pg-diff-hunk';
    }
    pre.appendChild(css ? el('span', css, line) : document.createTextNode(line));
  });
  return pre;
}

/**
 * Escape raw HTML in Markdown source (like markdown-it's `html: false` on the Python side):
 * every `<` outside fenced code blocks and inline code spans becomes `&lt;`, so a model that
 * writes `<div>` in prose shows the text instead of an element.
 */
export function escapeRawHtml(source: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of source.split('\n')) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== null) {
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length) {
        fence = null;
      }
      out.push(line);
      continue;
    }
    if (marker) {
      fence = marker[1];
      out.push(line);
      continue;
    }
    if (/^( {4}|\t)/.test(line)) {
      out.push(line);
      continue;
    }
    // Outside code: keep inline code spans (matching backtick runs) as they are.
    out.push(line.replace(/(`+)[\s\S]*?\1|</g, match => (match === '<' ? '&lt;' : match)));
  }
  return out.join('\n');
}

export class TranscriptWidget extends Widget implements IRenderMime.IRenderer {
  constructor(private options: IRenderMime.IRendererOptions) {
    super();
    this.addClass('penguin-transcript');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    // Everything is built detached and shown at once: the page (and a test reading it) never sees
    // a header without its body while the Markdown parser is still working.
    // a tool output's images are saved in the text/html only (withSavedImages)
    const data = withSavedImages(model.data[this.options.mimeType], model.data['text/html']);
    this.node.replaceChildren(...(await this.parts(data)));
  }

  private async parts(data: unknown): Promise<HTMLElement[]> {
    let bundle: Bundle;
    try {
      bundle = readBundle(data);
    } catch (error) {
      return [el('div', 'pg-failed', `Cannot render this penguin transcript: ${error}`)];
    }
    const body = el('div', 'pg-body');
    for (const block of buildBlocks(bundle.messages, bundle.tools)) {
      body.appendChild(await this.block(block));
    }
    const parts = [this.header(bundle), body];
    if (bundle.usage) {
      const s = bundle.usage.session;
      const cost = costText(bundle.usage.cost);
      parts.push(el('div', 'pg-usage',
        `tokens: session ${s.total} total (${s.cache_write} input, ${s.cache_read} cached input, ` +
        `${s.output} output) · last request ${bundle.usage.request.total}` + (cost ? ` · ${cost}` : '')));
    }
    return parts;
  }

  private header(bundle: Bundle): HTMLElement {
    const s = bundle.session;
    const model = [s.provider, s.model_id].filter(Boolean).join('/') || 'unknown model';
    const meta = [
      s.session_id ? sessionLabel(s.session_id) : '',
      s.approval_mode ? `approve ${s.approval_mode}` : ''
    ].filter(Boolean).join(' · ');
    const header = el('div', 'pg-header',
      // no emoji: a missing-glyph box where no colour-emoji font is installed (issue 39)
      el('span', 'pg-title', `penguin · ${model} · `),
      el('span', `pg-status pg-status-${bundle.status}`, bundle.status),
      el('div', 'pg-meta', meta),
      undoControl(bundle.undo ?? null, this.node));
    if (bundle.version > BUNDLE_VERSION) {
      header.appendChild(el('div', 'pg-meta',
        `bundle version ${bundle.version} is newer than this renderer (${BUNDLE_VERSION}); some parts may be missing`));
    }
    return header;
  }

  private async markdown(text: string): Promise<HTMLElement> {
    const node = el('div', 'pg-markdown');
    const parser = this.options.markdownParser;
    if (parser) {
      try {
        // The allow-list rebuild runs first (so what JupyterLab's sanitizer would silently drop,
        // e.g. an <svg> with an href, still leaves a placeholder naming its host) and last (so
        // nothing the sanitizer keeps, e.g. <img src>, ever reaches the page).
        const html = await parser.render(escapeRawHtml(text));
        node.appendChild(safeFragment(this.options.sanitizer.sanitize(safeHtml(html))));
        return node;
      } catch {
        // fall through to plain text
      }
    }
    node.classList.add('pg-plain');
    node.textContent = text;
    return node;
  }

  /** A user message as Markdown; a long one folds after its head, like long tool output. */
  private async userText(text: string): Promise<HTMLElement[]> {
    const folded = foldText(text);
    if (!folded.rest) {
      return [await this.markdown(text)];
    }
    return [
      await this.markdown(folded.head),
      details(folded.label, 'pg-user-more', false, await this.markdown(folded.rest))
    ];
  }

  private async block(block: Block): Promise<HTMLElement> {
    switch (block.kind) {
      case 'thinking':
        return details('thinking', 'pg-thinking', false, el('pre', '', block.thinking));
      case 'text': {
        if (block.role === 'user') {
          return el('div', 'pg-user', el('div', 'pg-meta', block.sender || 'user'), ...(await this.userText(block.text)));
        }
        const body = await this.markdown(block.text);
        return el('div', 'pg-text', body,
          block.stop_reason !== 'completed' && el('div', 'pg-failed', `(${block.stop_reason})`));
      }
      case 'image':
        return imageNode(block.source);
      case 'tool':
        return this.toolCard(block);
      case 'event':
        return el('div', `pg-event pg-event-${block.event}`, block.text);
      case 'subagent': {
        const model = block.provider && block.model_id ? ` · ${block.provider}/${block.model_id}` : '';
        const group = details(`subagent ${block.session_id}${model}`, 'pg-subagent', true);
        for (const child of block.blocks) {
          group.appendChild(await this.block(child));
        }
        return group;
      }
    }
  }

  private toolCard(card: ToolCard): HTMLElement {
    const node = el('div', 'pg-tool penguin-tool-card');
    node.dataset.toolCallId = card.tool_call_id;
    node.dataset.toolName = card.name;
    const title = card.has_call ? card.title : `(tool call ${card.tool_call_id} not in transcript)`;
    node.appendChild(el('div', 'pg-tool-header',
      el('span', 'pg-tool-title', title),
      card.description && el('span', 'pg-tool-description', ` — ${card.description}`)));
    if (card.command !== null) { // a shell command (its tool's `command` card role)
      node.appendChild(collapsiblePre(`$ ${card.command}`, 'pg-command'));
      if (card.workdir) {
        node.appendChild(el('div', 'pg-meta', `in ${card.workdir}`));
      }
    } else if (card.diff) {
      node.appendChild(diffPre(card.diff));
    } else if (card.body !== null) {
      node.appendChild(collapsiblePre(card.body, 'pg-body'));
    } else if (card.detail) {
      node.appendChild(el('div', 'pg-meta', card.detail));
    }
    if (card.has_call) {
      node.appendChild(details('arguments', 'pg-arguments', false, el('pre', '', card.arguments)));
    }
    if (card.call_stop_reason && card.call_stop_reason !== 'completed') {
      node.appendChild(el('div', 'pg-failed', `call ${card.call_stop_reason} (not executed)`));
    }
    if (card.decision) {
      const why = card.decision_reason ? ` — ${card.decision_reason}` : '';
      node.appendChild(el('div', `pg-decision pg-decision-${card.decision}`, `approval: ${card.decision}${why}`));
    }
    if (card.output !== null) {
      const status = card.output_stop_reason || 'completed';
      node.appendChild(el('div', status === 'completed' ? 'pg-meta' : 'pg-meta pg-failed',
        status === 'completed' ? 'output' : `output (${status})`));
      node.appendChild(collapsiblePre(card.output));
      card.images.forEach(src => node.appendChild(imageNode(src)));
    } else if (card.has_call) {
      node.appendChild(el('div', 'pg-meta', 'no output'));
    }
    return node;
  }
}
