/**
 * The notebook bridge: lets the agent in a notebook's kernel read, insert, edit, delete and run
 * that notebook's cells, as the user sees them (unsaved edits included).
 *
 * The page connects itself: whenever a notebook panel attaches to a kernel (opening, reloading,
 * a second window, a collaborator joining, a kernel change) it asks the kernel whether
 * `%load_ext penguin_jupyter` ran (an open comm on `penguin-notebook`) and, if so, opens its own
 * comm to the kernel target `penguin-notebook-page` with its hello (page id, notebook path,
 * server root, the session id of its kernel connection, subshell support, the notebook's
 * `penguin` metadata). `%load_ext` itself announces on `penguin-notebook`, so pages already
 * open connect then. Requests `{id, op, ...}` arrive only on this page's own comm: the page
 * acknowledges at once (`{id, ack}`), carries the operation out and replies `{id, ok, result |
 * error}`; a `ping` gets a `pong`. The comm is closed when the panel or the page goes away. The
 * page keeps no kernel future for what it sends (docs/notebook-tools.md "Memory"). The
 * operations live in bridge_ops.ts; the protocol is described in docs/notebook-tools.md.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { BridgeRequest, runOperation } from './bridge_ops';
import { trackBusyRequests } from './busy_status';
import { notePanel } from './panels';

export const COMM_TARGET = 'penguin-notebook';
export const PAGE_TARGET = 'penguin-notebook-page';
export const BRIDGE_VERSION = 2;
const COMM_INFO_WAIT_MS = 500;
const KERNEL_INFO_WAIT_MS = 1000;

/** One panel's link to one kernel connection. */
interface PageLink {
  panel: NotebookPanel;
  pageId: string;
  comm: Kernel.IComm | null;
}

const links = new WeakMap<Kernel.IKernelConnection, PageLink>();
const openComms = new Set<Kernel.IComm>();

type CommData = Parameters<Kernel.IComm['send']>[0];

/**
 * Nothing answers a comm message, and while a cell holds the kernel's shell the kernel handles
 * comm messages without busy/idle statuses: a future kept for one would never finish and would
 * hold the message (a whole read_notebook answer) in the page for good. So the bridge sends and
 * drops the future at once (docs/notebook-tools.md "Memory").
 */
function forget(future: { dispose(): void }): void {
  future.dispose();
}

function send(comm: Kernel.IComm, data: CommData): void {
  forget(comm.send(data));
}

function randomId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');
}

function frontendName(app: JupyterFrontEnd): string {
  return app.name.toLowerCase().includes('notebook') ? 'notebook' : 'jupyterlab';
}

/** The server's root directory as the page config states it (absolute; may be empty). */
function serverRoot(): string {
  try {
    const element = document.getElementById('jupyter-config-data');
    const config = element?.textContent ? JSON.parse(element.textContent) : {};
    return typeof config.serverRoot === 'string' ? config.serverRoot : '';
  } catch {
    return '';
  }
}

function hello(app: JupyterFrontEnd, link: PageLink, kernel: Kernel.IKernelConnection): any {
  return {
    op: 'hello',
    version: BRIDGE_VERSION,
    page_id: link.pageId,
    frontend: frontendName(app),
    path: link.panel.context.path,
    server_root: serverRoot(),
    session: kernel.clientId,
    subshells: kernel.supportsSubshells,
    metadata: (link.panel.content.model?.getMetadata('penguin') as any) ?? null
  };
}

function closeComm(link: PageLink): void {
  const comm = link.comm;
  link.comm = null;
  if (comm) {
    openComms.delete(comm);
    if (!comm.isDisposed) {
      try {
        forget(comm.close());
      } catch {
        // the connection is already gone: the kernel notices by itself
      }
    }
  }
}

function connect(app: JupyterFrontEnd, kernel: Kernel.IKernelConnection): void {
  const link = links.get(kernel);
  if (!link || link.panel.isDisposed || kernel.isDisposed || (link.comm && !link.comm.isDisposed)) {
    return;
  }
  const comm = kernel.createComm(PAGE_TARGET);
  link.comm = comm;
  openComms.add(comm);
  const answer = async (request: BridgeRequest): Promise<void> => {
    if (link.panel.isDisposed) {
      send(comm, { id: request.id, ok: false, error: 'the notebook is no longer open' });
      return;
    }
    try {
      const result = await runOperation(link.panel, kernel, request);
      send(comm, { id: request.id, ok: true, result: result as any });
    } catch (error) {
      send(comm, { id: request.id, ok: false, error: String((error as Error)?.message ?? error) });
    }
  };
  // The kernel connection handles its messages one after another and waits for a comm
  // handler's promise: an answer that waits on another kernel message (running a cell) must
  // not hold that chain, so the handler returns at once and answers later.
  comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
    const request = msg.content.data as unknown as BridgeRequest;
    if (request.op === 'ping') {
      send(comm, { op: 'pong' });
      return;
    }
    if (typeof request.id !== 'number') {
      return;
    }
    send(comm, { id: request.id, ack: true });
    void answer(request);
  };
  comm.onClose = () => {
    openComms.delete(comm);
    if (link.comm === comm) {
      link.comm = null;
    }
  };
  void openWhenKnown(app, link, kernel, comm);
}

/**
 * Open the page's comm with its hello once the kernel connection has read the kernel's info:
 * `supportsSubshells` is false until then, and a hello sent earlier (a kernel that loads the
 * extension at startup announces itself before that reply) would tell the kernel it cannot run
 * cells (no run_cell for the Task). Waits at most KERNEL_INFO_WAIT_MS, well within the kernel's
 * wait for a page at a cell start.
 */
async function openWhenKnown(
  app: JupyterFrontEnd,
  link: PageLink,
  kernel: Kernel.IKernelConnection,
  comm: Kernel.IComm
): Promise<void> {
  if (!kernel.supportsSubshells) {
    const waited = new Promise<void>(resolve => setTimeout(resolve, KERNEL_INFO_WAIT_MS));
    await Promise.race([kernel.info.then(() => undefined, () => undefined), waited]);
  }
  if (link.comm !== comm || comm.isDisposed || kernel.isDisposed) {
    return; // closed or replaced while waiting
  }
  forget(comm.open(hello(app, link, kernel)));
}

/**
 * Whether the kernel ran `%load_ext penguin_jupyter`: its announcement comm or a page's comm is
 * open. `comm_info` waits while the main shell is busy; no answer within `waitMs` is `null`.
 */
export async function penguinLoaded(
  kernel: Kernel.IKernelConnection,
  waitMs: number = COMM_INFO_WAIT_MS
): Promise<boolean | null> {
  const link = links.get(kernel);
  if (link?.comm && !link.comm.isDisposed) {
    return true;
  }
  const ask = async (): Promise<boolean> => {
    for (const target of [COMM_TARGET, PAGE_TARGET]) {
      const reply = await kernel.requestCommInfo({ target_name: target });
      const comms = (reply.content as { comms?: Record<string, unknown> }).comms ?? {};
      if (Object.keys(comms).length > 0) {
        return true;
      }
    }
    return false;
  };
  const late = new Promise<null>(resolve => setTimeout(() => resolve(null), waitMs));
  return Promise.race([ask(), late]);
}

/**
 * Connect when the kernel has the extension loaded (its announcement comm, or another page's).
 * Without an answer in COMM_INFO_WAIT_MS (the main shell is busy: a running %%penguin cell, or
 * a cell the page sent before this answer) the page opens its comm directly (comms travel on
 * their own subshell); a kernel without the extension closes it again (and logs "No such comm
 * target registered").
 */
async function connectIfLoaded(app: JupyterFrontEnd, kernel: Kernel.IKernelConnection): Promise<void> {
  try {
    const answer = await penguinLoaded(kernel);
    if (answer !== false) {
      connect(app, kernel);
    }
  } catch {
    // the kernel went away or does not answer comm_info: its %load_ext announces itself later
  }
}

function serve(app: JupyterFrontEnd, panel: NotebookPanel, kernel: Kernel.IKernelConnection): void {
  const existing = links.get(kernel);
  if (existing && existing.panel === panel) {
    return;
  }
  if (existing) {
    closeComm(existing);
  }
  const link: PageLink = { panel, pageId: randomId(), comm: null };
  links.set(kernel, link);
  kernel.registerCommTarget(COMM_TARGET, () => connect(app, kernel));
  kernel.statusChanged.connect((_sender, status) => {
    if ((status === 'restarting' || status === 'autorestarting' || status === 'dead') && link.comm) {
      openComms.delete(link.comm); // the kernel's comms are gone with it; its %load_ext announces again
      link.comm = null;
    }
  });
  panel.context.pathChanged.connect(() => {
    if (link.comm && !link.comm.isDisposed) {
      send(link.comm, hello(app, link, kernel));
    }
  });
  panel.disposed.connect(() => closeComm(link));
  void kernel.info.then(() => connectIfLoaded(app, kernel)).catch(() => undefined);
}

function watch(app: JupyterFrontEnd, panel: NotebookPanel): void {
  notePanel(panel); // the transcripts' Undo buttons find their kernel through it
  const attach = (): void => {
    const kernel = panel.sessionContext.session?.kernel;
    if (kernel) {
      trackBusyRequests(kernel); // Busy while a cell runs, whatever its comms do (busy_status.ts)
      serve(app, panel, kernel);
    }
  };
  panel.sessionContext.kernelChanged.connect(attach);
  panel.sessionContext.ready.then(attach).catch(() => undefined);
  attach();
}

/** A page that goes away says so: the kernel forgets it at once instead of timing out. */
function closeAllOnUnload(): void {
  window.addEventListener('pagehide', () => {
    for (const comm of Array.from(openComms)) {
      try {
        forget(comm.close());
      } catch {
        // nothing more to do while the page unloads
      }
    }
    openComms.clear();
  });
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'penguin-jupyter:notebook-bridge',
  description: 'Lets the penguin agent read, insert, edit and run cells of its own notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    closeAllOnUnload();
    tracker.forEach(panel => watch(app, panel));
    tracker.widgetAdded.connect((_sender, panel) => watch(app, panel));
  }
};

export default plugin;
