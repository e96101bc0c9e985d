"""The kinds ``kubetwin snapshot`` reads from a live cluster, and each node's kubelet configuration.

Every kind is LISTed (``client.Client.list_pages``) and its pages decoded straight into the strict
typed objects ``kubetwin snapshot`` keeps (``apischema.strict_struct``; a list's items carry no
``kind``/``apiVersion``, which are set from the list). A page the strict decoder refuses — a field
this release does not know — goes through ``model.kinds.check_object`` item by item, which names
the field (or accepts a later release's field with a warning). Then the same merge as for dumps
(``sim.snapshot.take``: DaemonSet pods, terminal pods, notes).

Each node's ``GET /api/v1/nodes/NAME/proxy/configz`` (the kubelet's ``/configz``,
``cmd/kubelet/app/server.go`` ``setConfigz``: ``{"kubeletconfig": <v1beta1 KubeletConfiguration
without kind and apiVersion>}``) is read when allowed: a 403 is a note (``nodes/proxy`` is a
powerful permission many clusters do not grant), as is a node whose kubelet does not answer.

Refusals name what is missing, as the API server's authorizer words it: the verb, the resource,
the API group. A kind whose API the server does not serve (404) is a note.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

import msgspec

from ..errors import InputError
from ..model.loader import Document
from ..sim.snapshot import Snapshot, strict_type, take
from .client import Client, StatusError

RBAC_DOC = "docs/snapshot-rbac.yaml"


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


#: what a snapshot reads, in this order (nodes first: configz follows them)
RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "nodes", "Node", False),
    Resource("", "v1", "pods", "Pod", True),
    Resource("", "v1", "services", "Service", True),   # PodTopologySpread's default spreading selectors
    Resource("apps", "v1", "deployments", "Deployment", True),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True),
    Resource("apps", "v1", "statefulsets", "StatefulSet", True),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True),
    Resource("batch", "v1", "jobs", "Job", True),
    Resource("batch", "v1", "cronjobs", "CronJob", True),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    Resource("", "v1", "resourcequotas", "ResourceQuota", True),
    Resource("", "v1", "limitranges", "LimitRange", True),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True),
    Resource("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies", "NodeResourceTopology", False),
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False),
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True),
    Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
)

CONFIGZ_WORKERS = 8


def refused(err: StatusError, verb: str, resource: str, group: str, *, cluster: str, namespace: str | None,
            source: str) -> InputError:
    """401 / 403 as an error naming the permission missing."""
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    if err.code == 401:
        return InputError(f"Unauthorized: the API server refused the credentials of {cluster} ({verb} "
                          f'"{resource}")', file=source,
                          fix="renew the credentials (kubectl get nodes should work), or pick another --context")
    said = f" (the server said: {err.message})" if err.message else ""
    return InputError(f'Forbidden: cannot {verb} resource "{resource}" in API group "{group}" {where}{said}',
                      file=source, fix=f"grant {verb} on {resource} (the ClusterRole in {RBAC_DOC} has exactly "
                      "the read permissions a snapshot needs)")


class _List(msgspec.Struct):
    items: list[msgspec.Raw] = []


def _decode_page(page: bytes, res: Resource, url: str, first: int) -> list[Any]:
    """A page's items: typed objects, or Documents for the precise check when the strict decoder
    refuses the page (or the kind has none: custom kinds)."""
    from ..model.objects import _strict_list

    t = strict_type(res.api_version, res.kind)
    if t is not None:
        try:
            items = msgspec.json.decode(page, type=_strict_list(t)).items
            for item in items:
                item.kind, item.apiVersion = res.kind, res.api_version
            return [(item, url) for item in items]
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass
    try:
        raw = msgspec.json.decode(page)
    except msgspec.DecodeError as exc:
        raise InputError(f"the API server's answer is not JSON: {exc}", file=url) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("items"), list):
        raise InputError("the API server's answer is not a List (no items)", file=url)
    out = []
    for i, obj in enumerate(raw["items"]):
        if isinstance(obj, dict):
            obj = {"apiVersion": res.api_version, "kind": res.kind, **obj}
        out.append(Document(obj, url, first + i))
    return out


def check_server_version(client: Client, version: str | None) -> str | None:
    """``GET /version`` against the release kubetwin reads the snapshot as (``--kubernetes-version``,
    or the default): a difference is a warning naming the flag (an error under ``--strict``) —
    defaults, feature gates and the API fields a release knows all follow that one version.
    Returns the server's ``major.minor`` (None when it does not say)."""
    from ..diagnostics import warn
    from ..model.features import KNOWN_VERSIONS, normalize_version

    server = client.server_version()
    wanted = normalize_version(version)
    if server is None or server == wanted:
        return server
    how = "--kubernetes-version" if version is not None else "the default release (no --kubernetes-version)"
    if server in KNOWN_VERSIONS:
        fix = f"give --kubernetes-version {server} to snapshot and to every command that reads the snapshot"
    else:
        fix = (f"Kubernetes {server} is not modelled (kubetwin models {', '.join(KNOWN_VERSIONS)}): give "
               "--kubernetes-version with the nearest one")
    warn(InputError(f"the API server runs Kubernetes {server}, the snapshot is read as {wanted} ({how})",
                    file=client.cluster.server + "/version", path="--kubernetes-version", fix=fix))
    return server


def read_cluster(client: Client, *, namespace: str | None = None, configz: bool = True,
                 comparison_operators: bool = False,
                 progress: Callable[[str], None] | None = None) -> Snapshot:
    """The cluster behind ``client`` as one snapshot (objects of ``namespace`` only, if given;
    cluster-scoped kinds always)."""
    say = progress or (lambda _msg: None)
    cluster = client.cluster
    snap = Snapshot()
    docs: list[Any] = []
    node_names: list[str] = []
    for res in RESOURCES:
        path = res.path(namespace)
        url = cluster.server + path
        n = pages = 0
        items_of_res: list[Any] = []
        try:
            # each page decoded as it arrives (the raw page let go), dropped if the list restarts
            for page in client.iter_pages(path):
                if page is None:
                    items_of_res, n, pages = [], 0, 0
                    continue
                items = _decode_page(page, res, url, n)
                n += len(items)
                pages += 1
                items_of_res.extend(items)
        except StatusError as err:
            if err.code in (401, 403):
                raise refused(err, "list", res.plural, res.group, cluster=cluster.name,
                              namespace=namespace if res.namespaced else None, source=cluster.source) from None
            if err.code == 404:
                snap.extra_notes.append(f"{res.api_version} {res.plural} is not served by the API server: "
                                        f"no {res.kind} read")
                say(f"{res.plural}: not served ({res.api_version})")
                continue
            raise InputError(f"cannot list {res.plural}: {err}", file=err.url) from None
        docs.extend(items_of_res)
        if res.kind == "Node":
            node_names.extend(_name(i) for i in items_of_res)
        say(f"{res.plural}: {n} ({pages} page{'s' if pages != 1 else ''})")
    if namespace:
        snap.extra_notes.append(f'only the namespace "{namespace}" was read: pods of other namespaces hold '
                                "resources on the nodes too, and are not in this snapshot")
    take(docs, comparison_operators=comparison_operators, snap=snap)
    if configz and node_names:
        snap.kubelet_configs.update(read_configz(client, node_names, snap.extra_notes, say))
    return snap


def _name(item: Any) -> str:
    obj = item.obj if isinstance(item, Document) else item[0]
    meta = obj.get("metadata") if isinstance(obj, dict) else obj.metadata
    name = meta.get("name") if isinstance(meta, dict) else getattr(meta, "name", None)
    return str(name or "")


def configz_path(node: str) -> str:
    from urllib.parse import quote

    return f"/api/v1/nodes/{quote(node, safe='')}/proxy/configz"


def read_configz(client: Client, nodes: list[str], notes: list[str],
                 say: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    """Each node's KubeletConfiguration from its kubelet's ``/configz`` (where allowed and answered)."""
    out: dict[str, dict[str, Any]] = {}
    failed: dict[str, str] = {}

    def one(node: str) -> tuple[str, dict[str, Any] | None, str]:
        try:
            body = client.get(configz_path(node))
        except StatusError as err:
            if err.code in (401, 403):
                raise
            return node, None, str(err)
        try:
            cfg = msgspec.json.decode(body)
        except msgspec.DecodeError:
            return node, None, "the answer is not JSON"
        kc = cfg.get("kubeletconfig") if isinstance(cfg, dict) else None
        if not isinstance(kc, dict):
            return node, None, 'the answer has no "kubeletconfig" object'
        return node, {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **kc}, ""

    try:
        first = [one(nodes[0])]
    except StatusError as err:
        notes.append(f"kubelet configurations not read: {err.code} {err.reason} on get nodes/proxy "
                     f"(grant get on nodes/proxy to read each node's /configz; see {RBAC_DOC})")
        say("configz: not allowed")
        return out
    with ThreadPoolExecutor(max_workers=CONFIGZ_WORKERS) as pool:
        results = first + list(pool.map(_guard(one), nodes[1:]))
    for node, cfg, why in results:
        if cfg is None:
            failed[node] = why
        else:
            out[node] = cfg
    for node, why in sorted(failed.items())[:5]:
        notes.append(f"node {node}: kubelet configuration not read ({why})")
    if len(failed) > 5:
        notes.append(f"... and {len(failed) - 5} more node(s) whose kubelet configuration was not read")
    say(f"configz: {len(out)} of {len(nodes)} nodes")
    return out


def _guard(fn: Callable[[str], tuple[str, dict[str, Any] | None, str]]
           ) -> Callable[[str], tuple[str, dict[str, Any] | None, str]]:
    """A refusal on one node after the first was allowed: that node's note, not an error."""
    def run(node: str) -> tuple[str, dict[str, Any] | None, str]:
        try:
            return fn(node)
        except StatusError as err:
            return node, None, str(err)
    return run
