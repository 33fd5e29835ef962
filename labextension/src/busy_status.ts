/**
 * The kernel status a notebook shows: Busy while any request the kernel reported busy has not
 * reported idle, not merely the last status message (docs/notebook-runtime.md "Busy while a cell
 * runs").
 *
 * ipykernel 7.4 handles control requests (JupyterLab's `create_subshell_request` when a comm is
 * first used, `delete_subshell_request`) and comm messages on kernel subshells while a cell runs
 * on the main shell, and brackets each with its own busy/idle status. JupyterLab's kernel
 * connection takes every status message for the whole kernel's state, so a `%%penguin` cell —
 * or any cell awaiting at top level while widgets or comms talk to the kernel — read "Idle" in
 * the status bar while it still showed `[*]`. Here each notebook kernel connection counts busy
 * requests by parent message id: a status message whose parent is busy adds it, an idle removes
 * it, and the connection's status is Busy while any remains. Statuses the connection ignores
 * (JupyterLab's untracked message types) stay ignored; every other status (starting,
 * restarting, dead, unknown — a restart or a lost connection) clears the count and passes
 * through. Futures and comms still see every status message as sent: only the connection's
 * status changes. Owns nothing else; bridge.ts applies it to every notebook's kernel.
 *
 * It wraps two private methods of `KernelConnection` (`_handleMessage`, `_updateStatus`,
 * @jupyterlab/services 7.x); a connection that lacks either is left as it is.
 */

import { Kernel, KernelMessage } from '@jupyterlab/services';

interface StatusInternals {
  _handleMessage(msg: KernelMessage.IMessage): Promise<void>;
  _updateStatus(status: Kernel.Status): void;
}

const tracked = new WeakSet<Kernel.IKernelConnection>();

function isStatus(msg: KernelMessage.IMessage | null): msg is KernelMessage.IStatusMsg {
  return msg !== null && msg.channel === 'iopub' && msg.header.msg_type === 'status';
}

/** Make `kernel`'s status Busy while any request it reported busy is unfinished. */
export function trackBusyRequests(kernel: Kernel.IKernelConnection): void {
  const internals = kernel as unknown as Partial<StatusInternals>;
  if (
    tracked.has(kernel) ||
    typeof internals._handleMessage !== 'function' ||
    typeof internals._updateStatus !== 'function'
  ) {
    return;
  }
  tracked.add(kernel);
  const handleMessage = internals._handleMessage;
  const updateStatus = internals._updateStatus;
  const busy = new Set<string>();
  // The connection handles its messages one at a time (its message chain): `handling` is the
  // message whose handler is running, so a status update made for it can be told apart.
  let handling: KernelMessage.IMessage | null = null;

  internals._handleMessage = function (this: unknown, msg: KernelMessage.IMessage): Promise<void> {
    handling = msg;
    return handleMessage.call(this, msg).finally(() => {
      if (handling === msg) {
        handling = null;
      }
    });
  };
  internals._updateStatus = function (this: unknown, status: Kernel.Status): void {
    const msg = handling;
    if (status === 'busy' || status === 'idle') {
      if (isStatus(msg) && msg.content.execution_state === status) {
        const parent = msg.parent_header && 'msg_id' in msg.parent_header ? msg.parent_header.msg_id : '';
        if (parent) {
          if (status === 'busy') {
            busy.add(parent);
          } else {
            busy.delete(parent);
          }
        }
        status = busy.size > 0 ? 'busy' : 'idle';
      }
    } else {
      busy.clear();
    }
    updateStatus.call(this, status);
  };
}
