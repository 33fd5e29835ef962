/**
 * The notebook bridge: lets the agent in a notebook's kernel read, insert, edit, delete and run
 * that notebook's cells, as the user sees them (unsaved edits included).
 *
 * The kernel opens a comm on the target `penguin-notebook` (when `%load_ext penguin_jupyter`
 * runs); this plugin registers that target on every notebook's kernel connection, answers with a
 * `hello` (frontend name, notebook path, subshell support, the notebook's `penguin` metadata) and
 * then serves requests `{id, op, ...}` with replies `{id, ok, result | error}`. The operations live
 * in bridge_ops.ts; the protocol is described in docs/notebook-tools.md.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { BridgeRequest, runOperation } from './bridge_ops';
import { notePanel } from './undo_control';

export const COMM_TARGET = 'penguin-notebook';
export const BRIDGE_VERSION = 1;

/** Connections whose target is registered, and the panel each one serves. */
const servedPanels = new WeakMap<Kernel.IKernelConnection, NotebookPanel>();

function frontendName(app: JupyterFrontEnd): string {
  return app.name.toLowerCase().includes('notebook') ? 'notebook' : 'jupyterlab';
}

function serve(app: JupyterFrontEnd, panel: NotebookPanel, kernel: Kernel.IKernelConnection): void {
  servedPanels.set(kernel, panel);
  if ((kernel as unknown as { _penguinBridge?: boolean })._penguinBridge) {
    return;
  }
  (kernel as unknown as { _penguinBridge?: boolean })._penguinBridge = true;
  kernel.registerCommTarget(COMM_TARGET, (comm: Kernel.IComm, _open: KernelMessage.ICommOpenMsg) => {
    const current = (): NotebookPanel | undefined => servedPanels.get(kernel);
    const answer = async (request: BridgeRequest): Promise<void> => {
      const target = current();
      if (!target || target.isDisposed) {
        comm.send({ id: request.id, ok: false, error: 'the notebook is no longer open' });
        return;
      }
      try {
        const result = await runOperation(target, kernel, request);
        comm.send({ id: request.id, ok: true, result: result as any });
      } catch (error) {
        comm.send({ id: request.id, ok: false, error: String((error as Error)?.message ?? error) });
      }
    };
    // The kernel connection handles its messages one after another and waits for a comm
    // handler's promise: an answer that waits on another kernel message (running a cell) must
    // not hold that chain, so the handler returns at once and answers later.
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
      void answer(msg.content.data as unknown as BridgeRequest);
    };
    const target = current();
    comm.send({
      op: 'hello',
      version: BRIDGE_VERSION,
      frontend: frontendName(app),
      path: target?.context.path ?? '',
      subshells: kernel.supportsSubshells,
      metadata: (target?.content.model?.getMetadata('penguin') as any) ?? null
    });
  });
}

function watch(app: JupyterFrontEnd, panel: NotebookPanel): void {
  notePanel(panel); // the transcripts' Undo buttons find their kernel through it
  const attach = (): void => {
    const kernel = panel.sessionContext.session?.kernel;
    if (kernel) {
      serve(app, panel, kernel);
    }
  };
  panel.sessionContext.kernelChanged.connect(attach);
  panel.sessionContext.ready.then(attach).catch(() => undefined);
  attach();
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'penguin-jupyter:notebook-bridge',
  description: 'Lets the penguin agent read, insert, edit and run cells of its own notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    tracker.forEach(panel => watch(app, panel));
    tracker.widgetAdded.connect((_sender, panel) => watch(app, panel));
  }
};

export default plugin;
