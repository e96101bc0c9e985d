"""Which plugin set which field of which container, and NRI's conflict rule.

The runtime adaptation claims every field a plugin's reply sets, per container; a second
plugin setting a field someone else already claimed is an error that fails the request:
``plugins "90-resource-manager" and "10-mine" both tried to set CPUSetCPUs`` (NRI's own
wording, keyed fields naming the key: ``Env FOO``). A plugin may clear (mark for removal) a
field it owns; a cleared field may be set again by the plugin that cleared it.

Upstream: containerd/nri v0.12.2 ``pkg/api/owners.go``, ``owners_generated.go``, ``api.proto``
(``enum Field``).
"""

from __future__ import annotations

from .api import is_marked_for_removal, mark_for_removal

FIELDS = ("None", "Annotations", "Mounts", "OciHooks", "Devices", "CdiDevices", "Env", "Args", "MemLimit",
          "MemReservation", "MemSwapLimit", "MemKernelLimit", "MemTCPLimit", "MemSwappiness",
          "MemDisableOomKiller", "MemUseHierarchy", "CPUShares", "CPUQuota", "CPUPeriod", "CPURealtimeRuntime",
          "CPURealtimePeriod", "CPUSetCPUs", "CPUSetMems", "PidsLimit", "HugepageLimits", "BlockioClass",
          "RdtClass", "CgroupsUnified", "CgroupsPath", "OomScoreAdj", "Rlimits", "IoPriority", "SeccompPolicy",
          "Namespace", "Sysctl", "LinuxNetDevices", "LinuxSched", "RdtClosID", "RdtSchemata",
          "RdtEnableMonitoring", "MemoryPolicy")
FIELD = {name: i for i, name in enumerate(FIELDS)}


class ConflictError(Exception):
    """Two plugins set the same field of one container."""


class FieldOwners:
    """``FieldOwners`` of one container: simple fields and keyed (compound) fields."""

    __slots__ = ("simple", "compound")

    def __init__(self) -> None:
        self.simple: dict[int, str] = {}
        self.compound: dict[int, dict[str, str]] = {}

    def _conflict(self, field: int, plugin: str, other: str, *qualifiers: str) -> ConflictError:
        return ConflictError(f'plugins "{plugin}" and "{other}" both tried to set '
                             f'{FIELDS[field]} {" ".join(qualifiers)}')

    def claim_simple(self, field: int, plugin: str) -> None:
        other = self.simple.get(field)
        if other is not None:
            clearer, marked = is_marked_for_removal(other)
            if not (marked and clearer == plugin):
                raise self._conflict(field, plugin, clearer if marked else other)
        self.simple[field] = plugin

    def claim_compound(self, field: int, key: str, plugin: str) -> None:
        owners = self.compound.get(field)
        if owners is None:
            self.compound[field] = owners = {}
        else:
            other = owners.get(key)
            if other is not None:
                clearer, marked = is_marked_for_removal(other)
                if not (marked and clearer == plugin):
                    raise self._conflict(field, plugin, clearer if marked else other, key)
        owners[key] = plugin

    def clear_simple(self, field: int, plugin: str) -> None:
        self.simple[field] = mark_for_removal(plugin)

    def clear_compound(self, field: int, key: str, plugin: str) -> None:
        self.compound.setdefault(field, {})[key] = mark_for_removal(plugin)

    def accumulate_simple(self, field: int, plugin: str) -> None:
        old = self.simple.get(field)
        self.simple[field] = plugin if old is None else f"{old},{plugin}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.simple:
            out["simple"] = {FIELDS[f]: p for f, p in sorted(self.simple.items())}
        if self.compound:
            out["compound"] = {FIELDS[f]: dict(sorted(m.items())) for f, m in sorted(self.compound.items())}
        return out


class OwningPlugins:
    """``OwningPlugins``: field owners per container id."""

    __slots__ = ("owners",)

    def __init__(self) -> None:
        self.owners: dict[str, FieldOwners] = {}

    def of(self, cid: str) -> FieldOwners:
        f = self.owners.get(cid)
        if f is None:
            f = self.owners[cid] = FieldOwners()
        return f

    def claim(self, cid: str, field: str, plugin: str, key: str | None = None) -> None:
        if key is None:
            self.of(cid).claim_simple(FIELD[field], plugin)
        else:
            self.of(cid).claim_compound(FIELD[field], key, plugin)

    def clear(self, cid: str, field: str, plugin: str, key: str | None = None) -> None:
        if key is None:
            self.of(cid).clear_simple(FIELD[field], plugin)
        else:
            self.of(cid).clear_compound(FIELD[field], key, plugin)

    def to_json(self) -> dict[str, dict[str, object]]:
        return {cid: f.to_json() for cid, f in sorted(self.owners.items())}
