"""A terminal picture of a machine (rich): sockets → NUMA nodes (memory, hugepages, PCI devices)
→ L3 groups → cores with their thread ids.

Made to fit 80 columns for a 2-socket machine: a core is written as its threads joined by
``+`` (``0+8``) and cores are wrapped. A node with more than ``MAX_CORES_LISTED`` cores shows
one line per L3 group (CPU ranges) instead, at most ``MAX_GROUPS_LISTED`` of them; a
machine with more than ``MAX_NODES_DETAILED`` NUMA nodes becomes a table with one line per
node. When NUMA nodes span sockets (CPUID-only hwloc dumps, old AMD boards) nodes come
first and sockets are drawn inside them.

Not an upstream module: kubetwin's own picture of a machine.
"""

from __future__ import annotations

from typing import Any

from ..machine.model import Machine, NUMANode
from ..machine.nrt import hugepage_resource
from ..model.cpuset import CPUSet

MAX_CORES_LISTED = 64
MAX_GROUPS_LISTED = 8
MAX_NODES_DETAILED = 8


def _bytes(n: int) -> str:
    for unit, mult in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= mult:
            v = n / mult
            return f"{v:.0f} {unit}" if v >= 100 or v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"


def _l3_groups(node: NUMANode) -> list[tuple[str, list]]:
    """(label, cores) per L3 group of a node, in the order the cores are listed."""
    groups: dict[Any, list] = {}
    labels: dict[Any, str] = {}
    for c in node.cores:
        if c.uncore_caches:
            u = c.uncore_caches[0]
            key: Any = ("u", u.id)
            if key not in labels:
                labels[key] = f"L3 #{u.id} {_bytes(u.size)}"
        else:
            key = ("n",)
            if key not in labels:
                l3 = next((x for x in node.caches if x.level >= 3), None)
                labels[key] = f"L3 {_bytes(l3.size)}" if l3 else "no L3"
        groups.setdefault(key, []).append(c)
    return [(labels[k], v) for k, v in groups.items()]


def _wrap(items: list[str], width: int, indent: str) -> list[str]:
    lines, cur = [], ""
    for it in items:
        add = it if not cur else f"  {it}"
        if cur and len(indent) + len(cur) + len(add) > width:
            lines.append(indent + cur)
            cur = it
        else:
            cur += add
    if cur:
        lines.append(indent + cur)
    return lines


def _group_lines(groups: list[tuple[str, list]], width: int, indent: str) -> list[str]:
    lines: list[str] = []
    if sum(len(cs) for _, cs in groups) <= MAX_CORES_LISTED:
        for lbl, cs in groups:
            lines.append(f"{indent}{lbl}: {len(cs)} cores")
            lines.extend(_wrap(["+".join(map(str, sorted(c.threads))) for c in cs], width, indent + "  "))
        return lines
    for lbl, cs in groups[:MAX_GROUPS_LISTED]:
        cpus = CPUSet(t for c in cs for t in c.threads)
        lines.append(f"{indent}{lbl}: {len(cs)} cores, CPUs {cpus}"[:width])
    if len(groups) > MAX_GROUPS_LISTED:
        lines.append(f"{indent}... {len(groups) - MAX_GROUPS_LISTED} more L3 groups")
    return lines


def _node_lines(m: Machine, node: NUMANode, width: int, sockets_inside: bool) -> list[str]:
    hps = ", ".join(f"{h.num_pages}×{hugepage_resource(h.page_size)[10:]}" for h in node.hugepages if h.num_pages)
    head = f"NUMA node {node.id}  {_bytes(node.memory)}" + (f"  hugepages {hps}" if hps else "")
    head += f"  CPUs {node.cpus}" if node.cores else "  (no CPUs)"
    lines = [head[:width]]
    groups = _l3_groups(node)
    if sockets_inside:
        for sock in sorted({c.socket_id for c in node.cores}):
            sub = [(lbl, [c for c in cs if c.socket_id == sock]) for lbl, cs in groups]
            lines.append(f"  Socket {sock}")
            lines.extend(_group_lines([(lbl, cs) for lbl, cs in sub if cs], width, "    "))
    else:
        lines.extend(_group_lines(groups, width, "  "))
    for d in m.pci_devices:
        if d.numa_node == node.id and d.kind != "other":
            name = d.model or f"{d.vendor_id:04x}:{d.device_id:04x}"
            root = f" ({d.pcie_root})" if d.pcie_root else ""
            lines.append(f"  {d.kind.upper():4} {d.address}{root}  {name}"[:width])
    return lines


def _distance_lines(m: Machine) -> list[str]:
    ids = [i for i in m.node_ids if i in m.distance_matrix]
    if len(ids) < 2:
        return []
    w = max(4, max(len(str(i)) for i in ids) + 1)
    lines = ["Distances" + " " * 4 + "".join(f"{i:>{w}}" for i in ids)]
    for a in ids:
        lines.append(f"  node {a:<6}" + "".join(f"{m.distance_matrix[a][b]:>{w}}" for b in ids))
    return lines


def _table_lines(m: Machine, width: int) -> list[str]:
    """One line per NUMA node, for machines too big to draw core by core."""
    lines = ["node socket      memory  CPUs                         L3  devices"]
    for n in m.nodes:
        sock = ",".join(map(str, sorted({c.socket_id for c in n.cores}))) or "-"
        kinds: dict[str, int] = {}
        for d in m.pci_devices:
            if d.numa_node == n.id and d.kind != "other":
                kinds[d.kind] = kinds.get(d.kind, 0) + 1
        devs = " ".join(f"{v}×{k}" for k, v in sorted(kinds.items())) or "-"
        cpus = str(n.cpus) or "(none)"
        if len(cpus) > 27:
            cpus = cpus[:24] + "..."
        l3 = len(_l3_groups(n)) if n.cores else 0
        lines.append(f"{n.id:>4} {sock:>6}  {_bytes(n.memory):>10}  {cpus:<27} {l3:>3}  {devs}"[:width])
    if m.distance_matrix:
        vals = sorted({d for row in m.distance_matrix.values() for d in row.values()})
        lines.append(f"Distances: {len(m.nodes)}×{len(m.nodes)} matrix, values {', '.join(map(str, vals))}")
    return lines


def picture_lines(m: Machine, width: int = 80) -> list[str]:
    """The picture as plain text lines (``render`` only adds colour)."""
    title = m.name or "machine"
    summary = (f"{m.num_sockets} socket(s), {len(m.nodes)} NUMA node(s), {m.num_physical_cores} cores, "
               f"{m.num_cores} CPUs, {_bytes(m.memory_capacity)}"
               + (f", swap {_bytes(m.swap_capacity)}" if m.swap_capacity else ""))
    lines = [f"{title}: {summary}"] if len(title) + len(summary) + 2 <= width else [title[:width], "  " + summary]
    if len(m.nodes) > MAX_NODES_DETAILED:
        lines.extend(_table_lines(m, width))
    elif any(len({c.socket_id for c in n.cores}) > 1 for n in m.nodes):
        for n in m.nodes:
            lines.extend(_node_lines(m, n, width, sockets_inside=True))
        lines.extend(_distance_lines(m))
    else:
        by_socket: dict[int | None, list[NUMANode]] = {}
        for n in m.nodes:
            socks = sorted({c.socket_id for c in n.cores})
            by_socket.setdefault(socks[0] if socks else None, []).append(n)
        for sock in sorted(by_socket, key=lambda s: (s is None, s or 0)):
            lines.append(f"Socket {sock}" if sock is not None else "Memory-only NUMA nodes (no CPUs)")
            for n in by_socket[sock]:
                lines.extend("  " + x for x in _node_lines(m, n, width - 2, sockets_inside=False))
        lines.extend(_distance_lines(m))
    unplaced = [d for d in m.pci_devices if d.numa_node is None and d.kind != "other"]
    if unplaced:
        lines.append(f"PCI devices without a single NUMA node: {len(unplaced)} "
                     f"({', '.join(sorted({d.kind for d in unplaced}))})")
    others = sum(1 for d in m.pci_devices if d.kind == "other")
    if others:
        lines.append(f"Other PCI functions (bridges, storage, ...): {others}")
    return lines


def render(m: Machine, console: Any) -> None:
    from rich.text import Text

    for line in picture_lines(m, width=min(max(console.width, 60), 120)):
        head = line.lstrip()
        style = "bold" if head.startswith(("Socket", "Memory-only", "node socket")) else (
            "cyan" if head.startswith("NUMA") else "")
        console.print(Text(line, style=style), overflow="fold")
