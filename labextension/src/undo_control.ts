/**
 * The Undo control in a transcript's header (docs/undo.md "The Undo button").
 *
 * The bundle's `undo` entry says what the kernel allows: `available` (the most recent Task not
 * undone: an enabled **Undo** button), `blocked` (a disabled button and why), `undone` (an
 * "undone" mark and the report line). A click runs `%penguin undo --task ID` silently on the
 * notebook's kernel; the kernel does the undo and shows this transcript again with its new state
 * (by display id, and through the bridge's `set_transcript` on a reloaded page). The task id
 * comes from the notebook, which may be a stranger's file: only the shape the kernel generates
 * (`task-N-hex`) is ever sent, so a forged id cannot become code. Nothing here runs without a
 * click. The notebook panels are registered by the bridge plugin (bridge.ts, panels.ts).
 */

import { KernelMessage } from '@jupyterlab/services';
import { UndoState } from './model';
import { panelOf } from './panels';

const TASK_ID = /^task-\d{1,9}-[0-9a-f]{6}$/;
function text(tag: string, className: string, value: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = value;
  return node;
}

/** The header's undo part for `undo` (nothing when the bundle has none). */
export function undoControl(undo: UndoState | null, host: HTMLElement): HTMLElement | null {
  if (!undo) {
    return null;
  }
  const box = document.createElement('div');
  box.className = 'pg-undo';
  if (undo.state === 'undone') {
    box.appendChild(text('span', 'pg-undone', 'undone'));
    if (undo.note) {
      box.appendChild(text('div', 'pg-meta pg-undo-note', undo.note));
    }
    return box;
  }
  const button = document.createElement('button');
  button.className = 'pg-undo-button jp-mod-styled';
  button.textContent = 'Undo';
  const note = text('div', 'pg-meta pg-undo-note', '');
  box.append(button, note);
  if (undo.state === 'blocked' || !TASK_ID.test(undo.task_id)) {
    button.disabled = true;
    const why = undo.state === 'blocked' ? undo.note : 'this transcript names no Task this kernel can undo';
    button.title = why;
    note.textContent = `Undo unavailable: ${why}`;
    return box;
  }
  button.title = "Undo this Task: its cells, the kernel's variables and the files it wrote";
  button.onclick = () => {
    const kernel = panelOf(host)?.sessionContext.session?.kernel;
    if (!kernel) {
      note.textContent = 'Undo needs this notebook\'s kernel: start it, or run "%penguin undo" in a cell';
      return;
    }
    button.disabled = true;
    note.textContent = 'undoing…';
    const future = kernel.requestExecute(
      { code: `%penguin undo --task ${undo.task_id}`, silent: true, store_history: false },
      true
    );
    const said: string[] = [];
    future.onIOPub = (msg: KernelMessage.IIOPubMessage) => {
      if (KernelMessage.isStreamMsg(msg)) {
        said.push(msg.content.text);
      }
    };
    future.done
      .then(() => {
        // On success the kernel replaced this transcript (and this node); otherwise say why.
        if (host.isConnected) {
          note.textContent = said.join('').trim() || 'the kernel did not answer';
          button.disabled = false;
        }
      })
      .catch(error => {
        note.textContent = `Undo failed: ${error}`;
        button.disabled = false;
      });
  };
  return box;
}
