"""`python -m penguin_jupyter.kernel_sandbox -f CONNECTION_FILE`: the sandboxed kernel's argv
(the kernelspec `kernels/penguin-sandbox/kernel.json`); see `launcher.py`."""

import sys

from .launcher import main

sys.exit(main())
