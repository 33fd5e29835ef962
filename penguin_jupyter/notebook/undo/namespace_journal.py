"""The namespace journal: the kernel's variables before a Task's code ran, and putting them back.

Owns `NamespaceBaseline` — taken before the first `run_python` / `run_cell` call of a Task: a
reference to every user variable's object (no copies: a dict of references), the bounded
fingerprint of each mutable object (fingerprint.py), and a copy of those below the copy limit —
and, at the Task's end, `settle()`, which compares the namespace with it: names bound (new),
rebound, deleted, and objects changed in place. `restore()` undoes that: new names removed,
rebound and deleted names bound to their previous object again, in-place changes restored from
the copy or reported "changed in place — not restored". A name the user changed again after
the Task is left alone and reported. See docs/undo.md "Kernel variables".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .fingerprint import copy_for_undo, fingerprint, restore_in_place, same_content, tracked

# IPython's own names, never the user's variables.
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})


def user_names(namespace: dict[str, object]) -> list[str]:
    return [name for name in namespace if not name.startswith("_") and name not in _IPYTHON_NAMES]


@dataclass
class NamespaceReport:
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    not_restored: list[tuple[str, str]] = field(default_factory=list)  # (name, why)


@dataclass
class NamespaceBaseline:
    objects: dict[str, object]
    prints: dict[str, str]
    copies: dict[str, object]
    # filled by settle() at the Task's end
    new: dict[str, object] = field(default_factory=dict)
    rebound: dict[str, object] = field(default_factory=dict)  # name → the object the Task left
    deleted: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)
    settled: bool = False

    @classmethod
    def take(cls, namespace: dict[str, object]) -> NamespaceBaseline:
        objects = {name: namespace[name] for name in user_names(namespace)}
        prints: dict[str, str] = {}
        copies: dict[str, object] = {}
        for name, obj in objects.items():
            if not tracked(obj):
                continue
            digest = fingerprint(obj)
            if digest is not None:
                prints[name] = digest
            saved = copy_for_undo(obj)
            if saved is not None:
                copies[name] = saved
        return cls(objects, prints, copies)

    def settle(self, namespace: dict[str, object]) -> None:
        """Compare the namespace now (the Task's end) with the baseline."""
        current = {name: namespace[name] for name in user_names(namespace)}
        self.new = {name: obj for name, obj in current.items() if name not in self.objects}
        self.deleted = [name for name in self.objects if name not in current]
        self.rebound = {
            name: obj for name, obj in current.items() if name in self.objects and obj is not self.objects[name]
        }
        self.mutated = [
            name
            for name, obj in current.items()
            if name in self.objects and obj is self.objects[name] and self._changed(name, obj)
        ]
        self.settled = True

    def _changed(self, name: str, obj: object) -> bool:
        if name in self.copies:
            return not same_content(self.copies[name], obj)
        before = self.prints.get(name)
        return before is not None and fingerprint(obj) != before

    @property
    def changed(self) -> bool:
        return bool(self.new or self.rebound or self.deleted or self.mutated)

    def restore(self, namespace: dict[str, object]) -> NamespaceReport:
        report = NamespaceReport()
        for name, left in self.new.items():
            if namespace.get(name, _MISSING) is left:
                del namespace[name]
                report.removed.append(name)
            elif name in namespace:
                report.not_restored.append((name, "changed again after the Task"))
        for name, left in self.rebound.items():
            if namespace.get(name, _MISSING) is left:
                namespace[name] = self.objects[name]
                report.restored.append(name)
            else:
                report.not_restored.append((name, "changed again after the Task"))
        for name in self.deleted:
            if name not in namespace:
                namespace[name] = self.objects[name]
                report.restored.append(name)
            else:
                report.not_restored.append((name, "bound again after the Task"))
        for name in self.mutated:
            self._restore_mutated(name, namespace, report)
        return report

    def _restore_mutated(self, name: str, namespace: dict[str, object], report: NamespaceReport) -> None:
        obj = self.objects[name]
        if namespace.get(name, _MISSING) is not obj:
            report.not_restored.append((name, "changed again after the Task"))
            return
        saved = self.copies.get(name)
        if saved is None:
            report.not_restored.append((name, "changed in place — not restored (too large to copy)"))
            return
        if not restore_in_place(saved, obj):
            namespace[name] = saved
        report.restored.append(name)


_MISSING = object()
