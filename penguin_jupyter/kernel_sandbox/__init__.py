"""The sandboxed kernel, "Python 3 (penguin sandbox)" (docs/security.md "The sandboxed kernel").

Owns what runs outside the sandbox for a kernel inside it: the kernelspec shipped with the
package (`kernels/penguin-sandbox/kernel.json`, installed as shared data so `jupyter kernelspec
list` and JupyterLab's launcher show it), the jupyter_client provisioner it names
(`provisioner.py`: refuses with one line where no sandbox can start, asks for Unix-socket
transport), and the launcher its argv runs (`launcher.py`, with `endpoints.py` for the hosts
its proxy lets through, `data_slice.py` for what it sees of the data root, `sockets.py` for how
the server reaches it). The walls are `environment/sandbox/`'s, the kernel class inside is
`notebook/sandboxed_kernel.py`, and what the harness allows in such a kernel is the notebook's
(`notebook/runtime/sandbox_approval.py`).
"""

KERNEL_SPEC_NAME = "penguin-sandbox"
PROVISIONER_NAME = "penguin-sandbox"
