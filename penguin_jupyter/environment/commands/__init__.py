"""Command sessions shared by exec_command, input_command and kill_command (docs/tools.md "Command sessions").

`session.py` owns one child process (threads read its pipes into a bounded buffer, a waiter
decides completion on the shell's exit); `manager.py` owns the per-Environment registry.
"""

from .manager import COMMAND_SESSION_CAP, CommandSessionManager, ManagerDisposedError
from .session import CommandSession

__all__ = ["COMMAND_SESSION_CAP", "CommandSession", "CommandSessionManager", "ManagerDisposedError"]
