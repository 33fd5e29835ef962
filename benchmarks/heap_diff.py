"""What grew between two heap snapshots of one page (e.g. `bench_browser_soak.py --snapshots DIR`).

Reads two V8 heap snapshots (`.heapsnapshot`, the CDP `HeapProfiler.takeHeapSnapshot` format)
taken in the same page session, where an object keeps its id from one snapshot to the next, and
prints:

* the objects only in the later snapshot, by class (constructor name, `(string)`, `(closure)`, …):
  count and self size; likewise the objects freed since the first;
* detached DOM nodes (the snapshot's `detachedness`) in each;
* with `--what-if CELLS`: the new JS bytes per cell still reachable with each of the three
  upstream paths that keep a finished Task's widgets cut (`upstream_paths`), and with all three;
* where the new objects hang: the later snapshot's shortest-path tree from the GC roots (weak edges
  left out, as DevTools' retainer view), each new object charged to the first new object on its
  path (its "frontier"); frontiers are grouped by the old object holding them and the edge, with the
  self sizes of everything under them and one example path from the root (a shortest path names
  one holder; an object may have others: `--what-if` cuts paths and counts what nothing else reaches).

Only the standard library and numpy; a 130 MB snapshot takes about a minute. Prints, asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict, deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

KEY_ID = re.compile(r"part of key \([^@]*@(\d+)\)")
STRING_TYPES = {"string", "concatenated string", "sliced string"}


@dataclass
class Snapshot:
    types: np.ndarray
    names: np.ndarray
    ids: np.ndarray
    sizes: np.ndarray
    detached: np.ndarray
    first_edge: np.ndarray
    edge_types: np.ndarray
    edge_names: np.ndarray
    edge_to: np.ndarray
    node_type_names: list[str]
    edge_type_names: list[str]
    strings: list[str]

    def cls(self, node: int) -> str:
        kind = self.node_type_names[self.types[node]]
        if kind in STRING_TYPES:
            return "(string)"
        if kind in ("object", "native"):
            return self.strings[self.names[node]]
        if kind == "closure":
            return f"(closure {self.strings[self.names[node]] or 'anonymous'})"
        return f"({kind})"

    def edge_label(self, edge: int) -> str:
        kind = self.edge_type_names[self.edge_types[edge]]
        name = self.edge_names[edge]
        if kind in ("element", "hidden"):
            return f"[{name}]"
        return self.strings[name]


def load(path: Path) -> Snapshot:
    data = json.loads(path.read_text())
    meta = data["snapshot"]["meta"]
    nf, ef = meta["node_fields"], meta["edge_fields"]
    nodes = np.asarray(data["nodes"], dtype=np.int64).reshape(-1, len(nf))
    edges = np.asarray(data["edges"], dtype=np.int64).reshape(-1, len(ef))
    counts = nodes[:, nf.index("edge_count")]
    first = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    detached = (
        nodes[:, nf.index("detachedness")] if "detachedness" in nf else np.zeros(len(nodes), dtype=np.int64)
    )
    return Snapshot(
        types=nodes[:, nf.index("type")],
        names=nodes[:, nf.index("name")],
        ids=nodes[:, nf.index("id")],
        sizes=nodes[:, nf.index("self_size")],
        detached=detached,
        first_edge=first,
        edge_types=edges[:, ef.index("type")],
        edge_names=edges[:, ef.index("name_or_index")],
        edge_to=edges[:, ef.index("to_node")] // len(nf),
        node_type_names=meta["node_types"][0],
        edge_type_names=meta["edge_types"][0],
        strings=data["strings"],
    )


def by_class(snap: Snapshot, nodes: np.ndarray) -> list[tuple[str, int, int]]:
    count: Counter[str] = Counter()
    size: Counter[str] = Counter()
    for node in nodes.tolist():
        key = snap.cls(node)
        count[key] += 1
        size[key] += int(snap.sizes[node])
    return sorted(((k, count[k], size[k]) for k in count), key=lambda row: -row[2])


def ephemeron_keys(snap: Snapshot) -> dict[int, int]:
    """edge -> the node index of its WeakMap key, for the edges from a WeakMap's table to a value
    (V8 names them "part of key (K @id) -> value (V @id) pair in WeakMap (table @id)"): such a
    value is alive only while its key is, so a path may use the edge only once the key is reached."""
    index = {int(i): n for n, i in enumerate(snap.ids.tolist())}
    keyed = {}
    for s_index, text in enumerate(snap.strings):
        if "part of key (" in text:
            match = KEY_ID.search(text)
            if match and int(match.group(1)) in index:
                keyed[s_index] = index[int(match.group(1))]
    edges = np.nonzero(
        np.isin(snap.edge_names, list(keyed)) & (snap.edge_types != snap.edge_type_names.index("element"))
    )[0]
    return {int(e): keyed[int(snap.edge_names[e])] for e in edges.tolist()}


def shortest_paths(snap: Snapshot, cut: frozenset[int] = frozenset()) -> tuple[np.ndarray, np.ndarray]:
    """BFS parents (node, edge) from the root (node 0): weak edges left out, a WeakMap value
    reached only once its key is, and no path through the nodes in `cut`."""
    n = len(snap.types)
    parent = np.full(n, -1, dtype=np.int64)
    via = np.full(n, -1, dtype=np.int64)
    weak = snap.edge_type_names.index("weak")
    keys = ephemeron_keys(snap)
    waiting: dict[int, list[tuple[int, int]]] = defaultdict(list)
    seen = np.zeros(n, dtype=bool)
    seen[0] = True
    queue = deque([0])
    first, etypes, eto = snap.first_edge.tolist(), snap.edge_types.tolist(), snap.edge_to.tolist()

    def visit(node: int, child: int, edge: int) -> None:
        if not seen[child] and child not in cut:
            seen[child] = True
            parent[child] = node
            via[child] = edge
            queue.append(child)

    while queue:
        node = queue.popleft()
        for child_node, edge in waiting.pop(node, ()):
            visit(child_node, eto[edge], edge)
        for edge in range(first[node], first[node + 1]):
            if etypes[edge] == weak:
                continue
            key = keys.get(edge)
            if key is not None and not seen[key]:
                waiting[key].append((node, edge))
                continue
            visit(node, eto[edge], edge)
    return parent, via


def path_text(snap: Snapshot, parent: np.ndarray, via: np.ndarray, node: int, steps: int = 12) -> str:
    parts = []
    while node > 0 and len(parts) < steps:
        parts.append(f"{snap.cls(node)} ←{snap.edge_label(int(via[node]))}─")
        node = int(parent[node])
    return " ".join(reversed(parts))


def upstream_paths(snap: Snapshot) -> dict[str, frozenset[int]]:
    """The three retention paths that keep a finished Task's widgets in a JupyterLab page
    (benchmarks/README.md, the soak), as the nodes to cut for each:

    * the lumino connections whose slot closes over a `CommHandler` (@jupyterlab/services: its
      constructor connects to `kernel.statusChanged` and never disconnects);
    * the connections whose slot closes over an ipywidgets `OutputModel` (it connects to
      `sessionContext.kernelChanged` and never disconnects);
    * the kernel connection's pending futures of `comm_msg`s (the kernel sent no idle for them).
    Names are found by shape (minified classes): a `CommHandler` has `_target` and `_kernel`, an
    `OutputModel` `_msgHook`, a future `_msg` with a header."""
    n_nodes = len(snap.ids)
    origin = np.repeat(np.arange(n_nodes), np.diff(snap.first_edge))
    index = {text: i for i, text in enumerate(snap.strings)}

    def named(name: str) -> np.ndarray:
        return snap.edge_names == index.get(name, -1)

    def holders(name: str) -> set[int]:
        return set(origin[named(name)].tolist())

    def slots_over(selves: set[int]) -> frozenset[int]:
        contexts = set(origin[named("this") & np.isin(snap.edge_to, list(selves))].tolist())
        closures = set(origin[named("context") & np.isin(snap.edge_to, list(contexts))].tolist())
        return frozenset(origin[named("slot") & np.isin(snap.edge_to, list(closures))].tolist())

    first, eto = snap.first_edge.tolist(), snap.edge_to.tolist()

    def prop(node: int, name: str) -> int | None:
        for edge in range(first[node], first[node + 1]):
            if snap.edge_label(edge) == name:
                return eto[edge]
        return None

    futures = set()
    for table in (prop(m, "table") for m in snap.edge_to[named("_futures")].tolist()):
        for edge in range(first[table], first[table + 1]) if table is not None else ():
            msg = prop(eto[edge], "_msg")
            header = prop(msg, "header") if msg is not None else None
            kind = prop(header, "msg_type") if header is not None else None
            if kind is not None and snap.strings[snap.names[kind]] == "comm_msg":
                futures.add(eto[edge])
    return {
        "comm handlers (statusChanged)": slots_over(holders("_target") & holders("_kernel")),
        "Output models (kernelChanged)": slots_over(holders("_msgHook")),
        "pending comm_msg futures": frozenset(futures),
    }


def what_if(snap: Snapshot, is_new: np.ndarray, per: int) -> None:
    """The new JS bytes still reachable with each upstream path cut, and with all of them."""
    paths = upstream_paths(snap)
    js = ~np.isin(
        snap.types, [snap.node_type_names.index(k) for k in ("native", "hidden", "synthetic", "object shape")]
    )
    print(f"\n## new JS bytes still reachable (per {per}) with upstream retention paths cut")
    cuts = {"none": frozenset[int](), **paths, "all three": frozenset().union(*paths.values())}
    for label, cut in cuts.items():
        parent, _ = shortest_paths(snap, cut)
        kept = ((parent >= 0) | (np.arange(len(parent)) == 0)) & is_new & js
        print(f"{snap.sizes[kept].sum() / 1e3 / per:10.1f} KB  {label} ({len(cut)} cut)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--what-if",
        type=int,
        metavar="CELLS",
        help="also cut the three upstream paths that keep widgets and print the new JS bytes left, per CELLS cells",
    )
    args = parser.parse_args()
    a, b = load(args.before), load(args.after)
    old_ids = set(a.ids.tolist())
    new_ids = set(b.ids.tolist())
    is_new = np.fromiter((i not in old_ids for i in b.ids.tolist()), dtype=bool, count=len(b.ids))
    freed = np.fromiter((i not in new_ids for i in a.ids.tolist()), dtype=bool, count=len(a.ids))
    print(
        f"before: {len(a.ids):,} objects, {a.sizes.sum() / 1e6:.1f} MB; after: {len(b.ids):,} objects, {b.sizes.sum() / 1e6:.1f} MB"
    )
    print(
        f"new: {is_new.sum():,} objects, {b.sizes[is_new].sum() / 1e6:.2f} MB; freed: {freed.sum():,}, {a.sizes[freed].sum() / 1e6:.2f} MB"
    )
    for label, snap, mask in (("NEW", b, is_new), ("FREED", a, freed)):
        print(f"\n## {label} objects by class (top {args.top} by self size)")
        for key, count, size in by_class(snap, np.nonzero(mask)[0])[: args.top]:
            print(f"{size / 1e3:10.1f} KB {count:8d}  {key[:100]}")
    for label, snap in (("before", a), ("after", b)):
        det = np.nonzero(snap.detached == 2)[0]
        print(f"\ndetached DOM nodes {label}: {len(det)} ({snap.sizes[det].sum() / 1e3:.1f} KB)")
        for key, count, size in by_class(snap, det)[:8]:
            print(f"{size / 1e3:10.1f} KB {count:8d}  {key[:100]}")
    parent, via = shortest_paths(b)
    frontier = np.full(len(b.ids), -1, dtype=np.int64)
    unreached = 0
    for node in np.nonzero(is_new)[0].tolist():
        chain = []
        cur = node
        while cur > 0 and is_new[cur] and frontier[cur] < 0:
            chain.append(cur)
            if parent[cur] < 0:
                break
            cur = int(parent[cur])
        if cur > 0 and frontier[cur] >= 0:
            top = int(frontier[cur])
        else:
            top = chain[-1] if chain else node
            if parent[top] < 0:
                unreached += 1
        for c in chain:
            frontier[c] = top
    charged: Counter[int] = Counter()
    for node in np.nonzero(is_new)[0].tolist():
        charged[int(frontier[node])] += int(b.sizes[node])
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for top in charged:
        holder = int(parent[top])
        key = (
            b.cls(holder) if holder >= 0 else "(unreachable)",
            b.edge_label(int(via[top])) if via[top] >= 0 else "",
            b.cls(top),
        )
        groups[key].append(top)
    rows = sorted(groups.items(), key=lambda kv: -sum(charged[t] for t in kv[1]))
    print(
        f"\n## where the new bytes hang (old holder ─edge→ first new object; {unreached} frontiers unreachable)"
    )
    for (holder, edge, first_new), tops in rows[: args.top]:
        total = sum(charged[t] for t in tops)
        example = max(tops, key=lambda t: charged[t])
        print(f"{total / 1e3:10.1f} KB {len(tops):6d}× {holder[:50]} ─{edge[:30]}→ {first_new[:50]}")
        print(f"      e.g. {path_text(b, parent, via, example)[-400:]}")
    if args.what_if:
        what_if(b, is_new, args.what_if)


if __name__ == "__main__":
    main()
