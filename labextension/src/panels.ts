/**
 * The open notebook panels, as the bridge plugin registers them (bridge.ts `watch`): a rendered
 * output finds its notebook, kernel and cell through them (the transcripts' Undo button, the error
 * outputs' Ask penguin button). Owns only this registry.
 */

import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

const panels = new Set<NotebookPanel>();

export function notePanel(panel: NotebookPanel): void {
  panels.add(panel);
  panel.disposed.connect(() => panels.delete(panel));
}

/** The notebook panel showing `node`, if any. */
export function panelOf(node: HTMLElement): NotebookPanel | undefined {
  for (const panel of panels) {
    if (!panel.isDisposed && panel.node.contains(node)) {
      return panel;
    }
  }
  return undefined;
}

/** The notebook cell showing `node` and its panel, if `node` is in one. */
export function cellOf(node: HTMLElement): { panel: NotebookPanel; cell: Cell } | undefined {
  const panel = panelOf(node);
  const cell = panel?.content.widgets.find(widget => widget.node.contains(node));
  return panel && cell ? { panel, cell } : undefined;
}
