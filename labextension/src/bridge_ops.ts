/**
 * The operations of the notebook bridge (bridge.ts owns the comm): read the cells, read one
 * cell's source (what an approval card shows), insert, edit (only onto the source the card showed,
 * when the request names it) and delete a cell, run a cell as a notebook cell on a kernel subshell, and keep the session id
 * in the notebook's metadata. For undo (docs/undo.md): read a whole cell (`cell`), put a cell
 * back or its outputs (`restore_cell`), and replace a transcript output (`set_transcript`).
 *
 * A cell is run on its own kernel subshell so it executes while the `%%penguin` cell that asked
 * for it is still running on the main shell; its outputs and execution count land in the cell
 * exactly as if the user had run it. Nothing here decides whether an operation is allowed: the
 * kernel asks the user before it sends a write or run request.
 */

import { Cell, CodeCell, MarkdownCell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';

export interface BridgeRequest {
  id: number;
  op: string;
  [key: string]: unknown;
}

interface CellSummary {
  index: number;
  id: string;
  cell_type: string;
  source: string;
  execution_count: number | null;
  outputs: unknown[];
}

const subshells = new WeakMap<Kernel.IKernelConnection, Promise<string>>();

function subshellFor(kernel: Kernel.IKernelConnection): Promise<string> {
  let pending = subshells.get(kernel);
  if (!pending) {
    pending = kernel.requestCreateSubshell({}).done.then(reply => {
      const content = reply.content as { status: string; subshell_id?: string };
      if (content.status !== 'ok' || !content.subshell_id) {
        throw new Error('the kernel could not create a subshell');
      }
      return content.subshell_id;
    });
    subshells.set(kernel, pending);
    pending.catch(() => subshells.delete(kernel));
    kernel.statusChanged.connect((_sender, status) => {
      if (status === 'restarting' || status === 'dead') {
        subshells.delete(kernel);
      }
    });
  }
  return pending;
}

function summarize(cell: Cell, index: number): CellSummary {
  const model = cell.model;
  const isCode = model.type === 'code';
  const codeModel = model as CodeCell['model'];
  return {
    index,
    id: model.id,
    cell_type: model.type,
    source: model.sharedModel.getSource(),
    execution_count: isCode ? codeModel.executionCount ?? null : null,
    outputs: isCode ? (codeModel.outputs.toJSON() as unknown[]) : []
  };
}

function findCell(panel: NotebookPanel, cellId: unknown): { cell: Cell; index: number } {
  if (typeof cellId !== 'string' || !cellId) {
    throw new Error('cell_id must be a non-empty string');
  }
  const cells = panel.content.widgets;
  for (let index = 0; index < cells.length; index++) {
    if (cells[index].model.id === cellId) {
      return { cell: cells[index], index };
    }
  }
  throw new Error(`no cell with id ${cellId} in this notebook (read_notebook lists the ids)`);
}

function readCells(panel: NotebookPanel, request: BridgeRequest): unknown {
  const cells = panel.content.widgets.map((cell, index) => summarize(cell, index));
  return { path: panel.context.path, dirty: panel.context.model.dirty, cells };
}

function insertCell(panel: NotebookPanel, request: BridgeRequest): unknown {
  const model = panel.content.model;
  if (!model) {
    throw new Error('the notebook has no model yet');
  }
  const cellType = request.cell_type === 'markdown' ? 'markdown' : 'code';
  const count = model.sharedModel.cells.length;
  let index = typeof request.index === 'number' ? Math.floor(request.index) : count;
  if (typeof request.index !== 'number' && typeof request.after_id === 'string') {
    const after = panel.content.widgets.findIndex(cell => cell.model.id === request.after_id);
    if (after >= 0) {
      index = after + 1;
    }
  }
  index = Math.max(0, Math.min(index, count));
  const shared = model.sharedModel.insertCell(index, {
    cell_type: cellType,
    source: String(request.source ?? ''),
    metadata: { penguin: { inserted_by: String(request.session_id ?? '') } }
  });
  return { id: shared.id, index };
}

function cellSource(panel: NotebookPanel, request: BridgeRequest): unknown {
  const { cell, index } = findCell(panel, request.cell_id);
  return { id: cell.model.id, index, cell_type: cell.model.type, source: cell.model.sharedModel.getSource() };
}

function editCell(panel: NotebookPanel, request: BridgeRequest): unknown {
  const { cell, index } = findCell(panel, request.cell_id);
  const old = cell.model.sharedModel.getSource();
  // The approval card showed the diff against `expected_source`: apply the edit only onto that.
  if (typeof request.expected_source === 'string' && old !== request.expected_source) {
    throw new Error(
      `cell ${cell.model.id} changed since the approval card showed it; the edit was not applied (read the cell again)`
    );
  }
  cell.model.sharedModel.setSource(String(request.source ?? ''));
  return { id: cell.model.id, index, old_source: old };
}

function deleteCell(panel: NotebookPanel, request: BridgeRequest): unknown {
  const { cell, index } = findCell(panel, request.cell_id);
  const source = cell.model.sharedModel.getSource();
  panel.content.model?.sharedModel.deleteCell(index);
  return { id: request.cell_id, index, source };
}

async function runCell(panel: NotebookPanel, kernel: Kernel.IKernelConnection, request: BridgeRequest): Promise<unknown> {
  const { cell, index } = findCell(panel, request.cell_id);
  if (cell.model.type === 'markdown') {
    (cell as MarkdownCell).rendered = true;
    return { index, status: 'ok', execution_count: null, outputs: [] };
  }
  if (cell.model.type !== 'code') {
    throw new Error('only code and markdown cells can run');
  }
  if (!kernel.supportsSubshells) {
    throw new Error('this kernel has no subshells (ipykernel >= 7.4 is needed to run cells while %%penguin runs)');
  }
  const codeCell = cell as CodeCell;
  const subshellId = await subshellFor(kernel);
  codeCell.model.sharedModel.transact(() => codeCell.model.clearExecution());
  const previous = kernel.subshellId;
  kernel.subshellId = subshellId;
  let future: Kernel.IShellFuture<KernelMessage.IExecuteRequestMsg, KernelMessage.IExecuteReplyMsg>;
  try {
    future = kernel.requestExecute(
      { code: codeCell.model.sharedModel.getSource(), stop_on_error: false },
      false,
      { cellId: codeCell.model.id, penguinRunCell: true }
    );
  } finally {
    kernel.subshellId = previous;
  }
  codeCell.outputArea.future = future;
  codeCell.model.executionState = 'running';
  try {
    const reply = await future.done;
    const content = reply.content as { status: string; execution_count?: number };
    codeCell.model.executionCount = content.execution_count ?? null;
    return {
      index,
      status: content.status,
      execution_count: content.execution_count ?? null,
      outputs: codeCell.model.outputs.toJSON()
    };
  } finally {
    codeCell.model.executionState = 'idle';
  }
}

/** The whole cell as nbformat JSON (what undo keeps before a delete or a run). */
function cellJson(panel: NotebookPanel, request: BridgeRequest): unknown {
  const { cell, index } = findCell(panel, request.cell_id);
  return { index, cell: cell.model.toJSON() };
}

/**
 * Undo: a cell that still exists gets the saved outputs and execution count back; one that is
 * gone is inserted again, whole (same id), at the saved index.
 */
function restoreCell(panel: NotebookPanel, request: BridgeRequest): unknown {
  const saved = request.cell as { id?: unknown; cell_type?: unknown; outputs?: unknown; execution_count?: unknown };
  if (!saved || typeof saved !== 'object' || typeof saved.id !== 'string') {
    throw new Error('restore_cell needs the cell as nbformat JSON with its id');
  }
  const model = panel.content.model;
  if (!model) {
    throw new Error('the notebook has no model yet');
  }
  const index = panel.content.widgets.findIndex(cell => cell.model.id === saved.id);
  if (index >= 0) {
    const existing = panel.content.widgets[index];
    if (existing.model.type === 'code') {
      const code = (existing as CodeCell).model;
      code.outputs.clear();
      for (const output of Array.isArray(saved.outputs) ? saved.outputs : []) {
        code.outputs.add(output as any);
      }
      code.executionCount = typeof saved.execution_count === 'number' ? saved.execution_count : null;
    }
    return { id: saved.id, index };
  }
  const count = model.sharedModel.cells.length;
  const at = Math.max(0, Math.min(typeof request.index === 'number' ? Math.floor(request.index) : count, count));
  model.sharedModel.insertCell(at, saved as any);
  return { id: saved.id, index: at };
}

/** Undo marks a Task's transcript: replace the cell's output of `mime` with the new data. */
function setTranscript(panel: NotebookPanel, request: BridgeRequest): unknown {
  const { cell, index } = findCell(panel, request.cell_id);
  if (cell.model.type !== 'code' || typeof request.mime !== 'string') {
    throw new Error('set_transcript needs a code cell and a mime type');
  }
  const outputs = (cell as CodeCell).model.outputs;
  for (let i = outputs.length - 1; i >= 0; i--) {
    const output = outputs.get(i);
    if (output.data[request.mime] !== undefined) {
      outputs.set(i, { output_type: output.type, data: request.data as any, metadata: output.metadata as any });
      return { index, output: i };
    }
  }
  throw new Error(`cell ${cell.model.id} has no ${request.mime} output`);
}

function setMetadata(panel: NotebookPanel, request: BridgeRequest): unknown {
  panel.content.model?.setMetadata('penguin', request.value as any);
  return {};
}

export async function runOperation(
  panel: NotebookPanel,
  kernel: Kernel.IKernelConnection,
  request: BridgeRequest
): Promise<unknown> {
  switch (request.op) {
    case 'read':
      return readCells(panel, request);
    case 'source':
      return cellSource(panel, request);
    case 'insert':
      return insertCell(panel, request);
    case 'edit':
      return editCell(panel, request);
    case 'delete':
      return deleteCell(panel, request);
    case 'run':
      return runCell(panel, kernel, request);
    case 'set_metadata':
      return setMetadata(panel, request);
    case 'cell':
      return cellJson(panel, request);
    case 'restore_cell':
      return restoreCell(panel, request);
    case 'set_transcript':
      return setTranscript(panel, request);
    default:
      throw new Error(`unknown bridge operation ${JSON.stringify(request.op)}`);
  }
}
