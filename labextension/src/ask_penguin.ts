/**
 * "Ask penguin" where the problem is (docs/notebook.md "Ask penguin about an error"): every error
 * output of a notebook code cell carries an **Ask penguin** button, and the cell's context menu
 * and cell toolbar an "Ask penguin about this error" entry. The first click inserts, below the
 * failing cell, a `%%penguin` cell whose prompt names it — `Fix the error in {cell:ID}`, the id
 * the kernel's `{cell:…}` expansion resolves through the bridge or the saved file — selected and
 * in edit mode. Nothing reaches the model then: the cell runs on a second, explicit click (the
 * button, now **Send to penguin**) or when the user runs it (Shift+Enter).
 *
 * A kernel that has not loaded the extension gets, above the new cell, a visible
 * `%load_ext penguin_jupyter` cell that runs at once (it sends nothing to a model and makes the
 * `%%penguin` cell work, also after a restart and Run All); a second ask below the same cell
 * reuses the cell still waiting to be run instead of adding another — only one this page inserted
 * or one holding exactly the default prompt: a `%%penguin` cell a shared notebook carries below
 * its error is never what a click sends.
 *
 * The button lives in a renderer for `application/vnd.jupyter.error` (every error output carries
 * that type beside the stderr text JupyterLab shows) added to each notebook's own rendermime, so
 * consoles and other outputs are untouched: it shows the traceback with JupyterLab's own stderr
 * renderer and adds the button under it. Owns the button, the command and the insertion; the
 * panels are registered by the bridge plugin (panels.ts).
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { PanelLayout, Widget } from '@lumino/widgets';
import { penguinLoaded } from './bridge';
import { cellOf } from './panels';

export const ERROR_MIME = 'application/vnd.jupyter.error';
const STDERR_MIME = 'application/vnd.jupyter.stderr';
export const ASK_COMMAND = 'penguin:ask-about-error';
/** Below JupyterLab's stderr renderer (110): an error output is shown by this one. */
const ERROR_RANK = 105;
export const LOAD_SOURCE = '%load_ext penguin_jupyter';
/** nbformat's cell id shape, the only ids `{cell:…}` names. */
const CELL_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** How long a click waits for the kernel to say whether it loaded the extension (comm_info). */
const LOADED_WAIT_MS = 5000;
const ASK_LABEL = 'Ask penguin';
const SEND_LABEL = 'Send to penguin';

/** The prompt a new ask cell starts with. */
export function askSource(cellId: string): string {
  return `%%penguin\nFix the error in {cell:${cellId}}`;
}

function sourceOf(cell: Cell): string {
  return cell.model.sharedModel.getSource();
}

function isLoadCell(cell: Cell | undefined): boolean {
  return !!cell && cell.model.type === 'code' && sourceOf(cell).trim() === LOAD_SOURCE;
}

function isPenguinCell(cell: Cell): boolean {
  return /^\s*%%penguin\b/.test(sourceOf(cell));
}

function hasError(cell: Cell): boolean {
  if (cell.model.type !== 'code') {
    return false;
  }
  const outputs = (cell as CodeCell).model.outputs;
  for (let i = 0; i < outputs.length; i++) {
    if (outputs.get(i).type === 'error') {
      return true;
    }
  }
  return false;
}

/** A Python notebook (or one that does not say its language): penguin runs in Python kernels. */
function pythonNotebook(panel: NotebookPanel): boolean {
  const model = panel.content.model;
  const spec = model?.getMetadata('kernelspec') as { language?: unknown } | undefined;
  const info = model?.getMetadata('language_info') as { name?: unknown } | undefined;
  const language = spec?.language ?? info?.name;
  return typeof language !== 'string' || language.toLowerCase() === 'python';
}

/** A failing cell Ask penguin can name: a code cell of a Python notebook, not itself a %%penguin
 * or a %load_ext penguin_jupyter cell. */
function askable(panel: NotebookPanel, cell: Cell): boolean {
  return cell.model.type === 'code' && !isPenguinCell(cell) && !isLoadCell(cell) && pythonNotebook(panel);
}

/** Tell the toolbar and menu entry to look again (an error output came or went). */
let askChanged: () => void = () => undefined;

/** The ask cells this page inserted: their prompt may have been edited here since. */
const inserted = new WeakSet<Cell>();

/**
 * The ask cell below `failing` that has not run yet (right below it, or below a load cell right
 * below it), if there is one this page may send: one it inserted, or one holding exactly the
 * default prompt. A notebook is a stranger's file: a `%%penguin` cell it carries below an error,
 * with its own prompt and options, is never what one click sends.
 */
function pendingAsk(panel: NotebookPanel, failing: Cell): CodeCell | null {
  const cells = panel.content.widgets;
  let index = cells.indexOf(failing) + 1;
  if (index <= 0) {
    return null;
  }
  if (isLoadCell(cells[index])) {
    index++;
  }
  const next = cells[index];
  if (
    !next ||
    next.model.type !== 'code' ||
    !isPenguinCell(next) ||
    !sourceOf(next).includes(`{cell:${failing.model.id}}`)
  ) {
    return null;
  }
  const model = (next as CodeCell).model;
  const waiting = model.executionCount === null && model.outputs.length === 0 && model.executionState !== 'running';
  const ours = inserted.has(next) || sourceOf(next) === askSource(failing.model.id);
  return waiting && ours ? (next as CodeCell) : null;
}

/** Select `cell` in edit mode with the cursor at the end of its source. */
async function editCell(panel: NotebookPanel, cell: Cell): Promise<void> {
  const notebook = panel.content;
  const index = notebook.widgets.indexOf(cell);
  if (index < 0) {
    return;
  }
  notebook.deselectAll();
  notebook.activeCellIndex = index;
  notebook.mode = 'edit';
  await notebook.scrollToItem(index).catch(() => undefined);
  await cell.ready;
  const editor = cell.editor;
  if (editor && notebook.activeCell === cell) {
    editor.setCursorPosition(editor.getPositionAt(sourceOf(cell).length) ?? { line: 0, column: 0 });
    editor.focus();
  }
}

export interface AskResult {
  cell: CodeCell;
  inserted: boolean;
  loaded: boolean; // whether a %load_ext cell was inserted and run first
}

/**
 * Insert the ask cell for `failing` (or find the one still waiting) and select it for editing.
 * Runs only the `%load_ext` cell, and only when the kernel has not loaded the extension.
 */
export async function askAbout(panel: NotebookPanel, failing: Cell): Promise<AskResult> {
  const id = failing.model.id;
  if (!CELL_ID.test(id)) {
    throw new Error(`this cell's id (${JSON.stringify(id)}) is not an nbformat id: {cell:…} cannot name it`);
  }
  const waiting = pendingAsk(panel, failing);
  if (waiting) {
    await editCell(panel, waiting);
    return { cell: waiting, inserted: false, loaded: false };
  }
  const model = panel.content.model;
  if (!model) {
    throw new Error('the notebook has no model yet');
  }
  await panel.sessionContext.ready.catch(() => undefined); // a reloaded page may not have its kernel yet
  const kernel = panel.sessionContext.session?.kernel ?? null;
  const loaded = kernel ? await penguinLoaded(kernel, LOADED_WAIT_MS).catch(() => null) : null;
  const cells = panel.content.widgets;
  let at = cells.indexOf(failing) + 1;
  let loadCell: Cell | null = null;
  if (isLoadCell(cells[at])) {
    loadCell = cells[at];
    at++;
  } else if (loaded !== true) {
    model.sharedModel.insertCell(at, { cell_type: 'code', source: LOAD_SOURCE });
    loadCell = panel.content.widgets[at];
    at++;
  }
  model.sharedModel.insertCell(at, { cell_type: 'code', source: askSource(id) });
  const asked = panel.content.widgets[at] as CodeCell;
  inserted.add(asked);
  const runLoad = loadCell !== null && loaded !== true && kernel !== null;
  if (runLoad) {
    void NotebookActions.runCells(panel.content, [loadCell as Cell], panel.sessionContext);
  }
  await editCell(panel, asked);
  return { cell: asked, inserted: true, loaded: runLoad };
}

/**
 * Run the ask cell (and a load cell above it that has not run in this kernel); resolves when the
 * run has started, not when the Task ends.
 */
export function sendAsk(panel: NotebookPanel, asked: CodeCell): void {
  const cells = panel.content.widgets;
  const above = cells[cells.indexOf(asked) - 1];
  const run: Cell[] =
    isLoadCell(above) && (above as CodeCell).model.executionCount === null ? [above, asked] : [asked];
  void NotebookActions.runCells(panel.content, run, panel.sessionContext);
}

/** The Ask penguin row under an error output. */
class AskBar {
  readonly node = document.createElement('div');
  private readonly button = document.createElement('button');
  private readonly note = document.createElement('span');
  private where: { panel: NotebookPanel; cell: Cell } | null = null;
  private sent: Cell | null = null; // sent from here: never sent twice, even before it shows [*]

  constructor(private readonly host: HTMLElement) {
    this.node.className = 'pg-ask';
    this.button.className = 'pg-ask-button jp-mod-styled';
    this.button.textContent = ASK_LABEL;
    this.note.className = 'pg-ask-note';
    this.node.append(this.button, this.note);
    this.button.onclick = () => void this.click();
  }

  /** Find the notebook cell the output is in (on attach: cells move, outputs do not leave theirs). */
  locate(): { panel: NotebookPanel; cell: Cell } | null {
    const found = cellOf(this.host);
    this.where = found ?? null;
    this.refresh();
    return this.where;
  }

  /** Show the row only in a notebook code cell it can name; say whether an ask is waiting. */
  refresh(): void {
    const where = this.where;
    const shown = where !== null && !where.cell.isDisposed && askable(where.panel, where.cell);
    this.node.hidden = !shown;
    if (shown && !this.button.disabled) {
      const pending = pendingAsk(where.panel, where.cell);
      const waiting = pending !== null && pending !== this.sent;
      this.button.textContent = waiting ? SEND_LABEL : ASK_LABEL;
      this.button.title = waiting
        ? 'Run the %%penguin cell below: its prompt goes to the model'
        : 'Insert a %%penguin cell below that asks the agent to fix this error (nothing is sent until you run it)';
      this.note.textContent = waiting ? 'edit the prompt in the cell below, then send it (or Shift+Enter in it)' : '';
    }
  }

  private async click(): Promise<void> {
    const where = this.locate();
    if (!where || !askable(where.panel, where.cell)) {
      return;
    }
    const waiting = pendingAsk(where.panel, where.cell);
    if (waiting && waiting !== this.sent && this.button.textContent === SEND_LABEL) {
      this.sent = waiting;
      sendAsk(where.panel, waiting); // the cell shows [*] and its live view from here
      this.refresh();
      this.note.textContent = 'sent: the %%penguin cell below is running';
      return;
    }
    this.button.disabled = true;
    try {
      await askAbout(where.panel, where.cell);
    } catch (error) {
      this.note.textContent = `Ask penguin: ${(error as Error)?.message ?? error}`;
      return;
    } finally {
      this.button.disabled = false;
    }
    this.refresh();
  }
}

/** An error output: JupyterLab's own stderr rendering of the traceback, and the Ask penguin row. */
class ErrorOutput extends Widget implements IRenderMime.IRenderer {
  private readonly bar: AskBar;
  private watched: NotebookPanel | null = null;

  constructor(private readonly traceback: IRenderMime.IRenderer) {
    super();
    this.addClass('pg-error-output');
    this.node.dataset.mimeType = STDERR_MIME; // JupyterLab's error background and padding
    const layout = new PanelLayout();
    this.layout = layout;
    layout.addWidget(traceback);
    this.bar = new AskBar(this.node);
    this.bar.node.hidden = true;
    this.node.appendChild(this.bar.node);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    await this.traceback.renderModel(model);
    this.bar.refresh();
  }

  protected onAfterAttach(): void {
    const panel = this.bar.locate()?.panel ?? null;
    if (panel?.content.model) {
      panel.content.model.contentChanged.connect(this.onNotebookChanged, this);
      this.watched = panel;
    }
    askChanged();
  }

  protected onBeforeDetach(): void {
    this.watched?.content.model?.contentChanged.disconnect(this.onNotebookChanged, this);
    this.watched = null;
    askChanged();
  }

  private onNotebookChanged(): void {
    this.bar.refresh();
  }
}

/** The renderer of `application/vnd.jupyter.error` in one notebook's rendermime. */
function addErrorRenderer(panel: NotebookPanel): void {
  const rendermime = panel.content.rendermime;
  if (rendermime.mimeTypes.includes(ERROR_MIME)) {
    return;
  }
  rendermime.addFactory(
    {
      safe: true,
      mimeTypes: [ERROR_MIME],
      createRenderer: () => new ErrorOutput(rendermime.createRenderer(STDERR_MIME))
    },
    ERROR_RANK
  );
}

function clickedCell(app: JupyterFrontEnd, tracker: INotebookTracker): { panel: NotebookPanel; cell: Cell } | null {
  const node = app.contextMenuHitTest(n => n.classList.contains('jp-Cell'));
  const hit = node ? cellOf(node) : undefined;
  if (hit) {
    return hit;
  }
  const panel = tracker.currentWidget;
  const cell = tracker.activeCell;
  return panel && cell ? { panel, cell } : null;
}

export const askPlugin: JupyterFrontEndPlugin<void> = {
  id: 'penguin-jupyter:ask',
  description: 'Ask penguin about an error: a button on error outputs and a cell menu entry.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    tracker.forEach(addErrorRenderer);
    tracker.widgetAdded.connect((_sender, panel) => addErrorRenderer(panel));
    app.commands.addCommand(ASK_COMMAND, {
      label: 'Ask penguin about this error',
      caption: 'Insert a %%penguin cell below that asks the agent to fix this error (nothing is sent until you run it)',
      iconClass: 'pg-ask-icon',
      isVisible: () => {
        const found = clickedCell(app, tracker);
        return !!found && askable(found.panel, found.cell) && hasError(found.cell);
      },
      execute: async () => {
        const found = clickedCell(app, tracker);
        if (found && askable(found.panel, found.cell)) {
          await askAbout(found.panel, found.cell);
        }
      }
    });
    askChanged = () => app.commands.notifyCommandChanged(ASK_COMMAND);
    tracker.activeCellChanged.connect(() => askChanged());
  }
};
