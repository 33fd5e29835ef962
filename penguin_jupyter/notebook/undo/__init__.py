"""Undo a `%%penguin` Task (docs/undo.md): the notebook's cells, the kernel's variables and the
workspace files put back as they were before it.

Owns the kernel's undo stack (`undo_stack.py`), the namespace journal and its bounded
fingerprints (`namespace_journal.py`, `fingerprint.py`), the notebook journal (`notebook_journal.py`)
and the wording (`undo_report.py`). The file journal is the environment's
(`environment/file_journal.py`); `%penguin undo` is a line command (runtime/line_commands.py).
"""
