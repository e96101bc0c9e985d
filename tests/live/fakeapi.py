"""A local API server for the live snapshot tests: stdlib ``http.server`` on 127.0.0.1, speaking the
shapes of ``k8s.io/apiserver`` — ``*List`` objects with ``metadata.resourceVersion`` and
``metadata.continue`` (``limit``/``continue`` paging), ``metav1.Status`` for every error (401,
403 with the authorizer's wording, 404 for an API group not served, 410 ``Expired`` continue
tokens, 429 with ``Retry-After``), and ``/api/v1/nodes/NAME/proxy/configz``. Not a test module."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

RESOURCE_VERSION = "48213"

EXPIRED_MESSAGE = ("The provided continue parameter is too old to display a consistent list result. You can start "
                   "a new list without the continue parameter, or use the continue token in this response to "
                   "retrieve the remainder of the results. Continuing with the provided token results in an "
                   "inconsistent list - objects that were created, modified, or deleted between the time the "
                   "first chunk was returned and now may show up in the list.")


def status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                           "message": message, "reason": reason, "code": code}
    if details is not None:
        out["details"] = details
    return out


def forbidden(user: str, verb: str, resource: str, group: str, namespace: str | None = None,
              subresource: str = "", name: str = "") -> dict[str, Any]:
    """The authorizer's 403, worded as ``k8s.io/apiserver/pkg/endpoints/handlers/responsewriters`` words it."""
    res = f"{resource}/{subresource}" if subresource else resource
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    what = f'{resource} "{name}"' if name else resource
    return status(403, "Forbidden", f'{what} is forbidden: User "{user}" cannot {verb} resource "{res}" in API '
                  f'group "{group}" {scope}', {"name": name, "kind": resource} if name else {"kind": resource})


NOT_FOUND = status(404, "NotFound", "the server could not find the requested resource",
                   {"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]})


@dataclass
class FakeAPI:
    """What the server holds and how it misbehaves; ``lists`` maps a list path to (list kind, items)."""

    token: str = "t0ken"
    lists: dict[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)
    configz: dict[str, dict[str, Any]] = field(default_factory=dict)
    forbid: set[str] = field(default_factory=set)          # paths answered 403
    expire_once: set[str] = field(default_factory=set)     # paths whose first continue token expires
    expire_always: set[str] = field(default_factory=set)   # paths whose every continue token expires
    throttle: dict[str, int] = field(default_factory=dict)  # path -> 429s to send first
    retry_after: str = "0"
    requests: list[str] = field(default_factory=list)
    user: str = "system:serviceaccount:default:reader"
    #: ``GET /version``'s answer (None: 404)
    version: dict[str, Any] | None = field(default_factory=lambda: {"major": "1", "minor": "36",
                                                                     "gitVersion": "v1.36.0"})

    def serve(self, tls: tuple[str, str] | None = None, client_ca: str | None = None) -> tuple[ThreadingHTTPServer, str]:
        """Serve on 127.0.0.1 (https with ``tls`` = (cert, key); a client certificate signed by
        ``client_ca`` then signs in as well as the token)."""
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def send(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                api.requests.append(self.path)
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                has_cert = bool(getattr(self.connection, "getpeercert", lambda: None)())
                if self.headers.get("Authorization") != f"Bearer {api.token}" and not has_cert:
                    return self.send(401, status(401, "Unauthorized", "Unauthorized"))
                path = url.path
                if api.throttle.get(path, 0) > 0:
                    api.throttle[path] -= 1
                    return self.send(429, status(429, "TooManyRequests", "Too many requests, please try again later.",
                                                 {"retryAfterSeconds": int(api.retry_after or 0)}),
                                     {"Retry-After": api.retry_after})
                if path in api.forbid:
                    parts = path.strip("/").split("/")
                    if path.endswith("/proxy/configz"):
                        return self.send(403, forbidden(api.user, "get", "nodes", "", subresource="proxy",
                                                        name=parts[-3]))
                    group = "" if parts[0] == "api" else parts[1]
                    ns = parts[parts.index("namespaces") + 1] if "namespaces" in parts else None
                    return self.send(403, forbidden(api.user, "list", parts[-1], group, ns))
                if path == "/version":
                    return self.send(200, api.version) if api.version is not None else self.send(404, NOT_FOUND)
                if path.endswith("/proxy/configz"):
                    node = path.split("/")[-3]
                    if node not in api.configz:
                        return self.send(503, status(503, "ServiceUnavailable",
                                                     f'no endpoints available for service "{node}"'))
                    return self.send(200, {"kubeletconfig": api.configz[node]})
                if path not in api.lists:
                    return self.send(404, NOT_FOUND)
                kind, items = api.lists[path]
                start = 0
                token = query.get("continue")
                if token:
                    if path in api.expire_once or path in api.expire_always:
                        api.expire_once.discard(path)
                        return self.send(410, status(410, "Expired", EXPIRED_MESSAGE))
                    start = int(json.loads(token)["start"])
                limit = int(query.get("limit", "0") or 0)
                end = len(items) if not limit else min(len(items), start + limit)
                meta: dict[str, Any] = {"resourceVersion": RESOURCE_VERSION}
                if end < len(items):
                    meta["continue"] = json.dumps({"v": "meta.k8s.io/v1", "rv": int(RESOURCE_VERSION),
                                                   "start": end})
                    meta["remainingItemCount"] = len(items) - end
                self.send(200, {"kind": kind, "apiVersion": kind_api_version(path), "metadata": meta,
                                "items": items[start:end]})

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        scheme = "http"
        if tls:
            import ssl

            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            if client_ca:
                ctx.verify_mode = ssl.CERT_OPTIONAL
                ctx.load_verify_locations(client_ca)
            server.socket = ctx.wrap_socket(server.socket, server_side=True)
            scheme = "https"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server, f"{scheme}://127.0.0.1:{server.server_address[1]}"


def self_signed(folder: Any, name: str, cn: str) -> tuple[str, str]:
    """A self-signed certificate and key for ``cn`` (127.0.0.1 as an IP SAN), made by openssl."""
    import subprocess

    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", f"/CN={cn}", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return str(cert), str(key)


def kind_api_version(path: str) -> str:
    parts = path.strip("/").split("/")
    return parts[1] if parts[0] == "api" else f"{parts[1]}/{parts[2]}"


def kubeconfig(tmp_path: Any, server: str, *, token: str | None = "t0ken", user: dict[str, Any] | None = None,
               context: str = "kind-dev", namespace: str | None = None) -> str:
    """A kubeconfig file (clusters, users, contexts, current-context) pointing at the fake server."""
    ctx: dict[str, Any] = {"cluster": "dev", "user": "reader"}
    if namespace:
        ctx["namespace"] = namespace
    cfg = {"apiVersion": "v1", "kind": "Config", "preferences": {},
           "clusters": [{"name": "dev", "cluster": {"server": server}}],
           "users": [{"name": "reader", "user": user if user is not None else {"token": token}}],
           "contexts": [{"name": context, "context": ctx},
                        {"name": "other", "context": {"cluster": "dev", "user": "reader"}}],
           "current-context": context}
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(cfg))
    return str(path)


# --- objects as the API server returns them in a list (no kind/apiVersion on items) --------------

def node_item(name: str, cpu: str = "8", memory: str = "32Gi") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "4101", "creationTimestamp": "2026-11-20T09:12:44Z",
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
                     "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                                        "time": "2026-11-20T09:12:44Z", "fieldsType": "FieldsV1",
                                        "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}]},
        "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"], "providerID": f"kind://docker/dev/{name}"},
        "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi",
                                "hugepages-2Mi": "0"},
                   "allocatable": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi",
                                   "hugepages-2Mi": "0"},
                   "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-11-26T00:00:00Z",
                                   "lastTransitionTime": "2026-11-20T09:13:10Z", "reason": "KubeletReady",
                                   "message": "kubelet is posting ready status"}],
                   "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}, {"type": "Hostname", "address": name}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                   "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.8.0",
                                "osImage": "Debian GNU/Linux 12 (bookworm)", "containerRuntimeVersion": "containerd://2.1.1",
                                "kubeletVersion": "v1.34.0", "kubeProxyVersion": "", "operatingSystem": "linux",
                                "architecture": "amd64"}}}


def pod_item(name: str, node: str | None, cpu: str = "500m", *, namespace: str = "default",
             owner: tuple[str, str] | None = None, phase: str = "Running") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "4222",
                            "creationTimestamp": "2026-11-21T10:00:00Z", "labels": {"app": "web"}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": f"uid-{owner[1]}",
                                    "controller": True, "blockOwnerDeletion": True}]
    spec: dict[str, Any] = {
        "containers": [{"name": "web", "image": "nginx:1.27", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"},
                                                                             "limits": {"memory": "256Mi"}},
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                        "imagePullPolicy": "IfNotPresent"}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
        "schedulerName": "default-scheduler", "priority": 0, "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300}]}
    if node:
        spec["nodeName"] = node
    st: dict[str, Any] = {"phase": phase if node else "Pending", "qosClass": "Burstable"}
    if node:
        st.update({"hostIP": "172.18.0.2", "podIP": "10.244.0.7", "startTime": "2026-11-21T10:00:01Z",
                   "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                                   "lastTransitionTime": "2026-11-21T10:00:04Z"}],
                   "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0, "image": "nginx:1.27",
                                          "imageID": "docker.io/library/nginx@sha256:0", "containerID": "containerd://1",
                                          "started": True, "state": {"running": {"startedAt": "2026-11-21T10:00:03Z"}}}]})
    return {"metadata": meta, "spec": spec, "status": st}


def deployment_item(name: str, replicas: int, namespace: str = "default") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "generation": 1,
                         "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                                           "resources": {"requests": {"cpu": "500m"}}}]}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                     "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                       "readyReplicas": replicas, "availableReplicas": replicas}}


def service_item(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-svc-{name}", "resourceVersion": "900"},
            "spec": {"ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                     "selector": {"app": "web"}, "clusterIP": "10.96.12.7", "clusterIPs": ["10.96.12.7"],
                     "type": "ClusterIP", "sessionAffinity": "None", "ipFamilies": ["IPv4"],
                     "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
            "status": {"loadBalancer": {}}}


def priority_class_item(name: str, value: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": f"uid-{name}"}, "value": value, "preemptionPolicy": "PreemptLowerPriority",
            "description": "for tests"}


def cluster(nodes: int = 3, pods: int = 7) -> FakeAPI:
    """A small cluster: nodes, pods bound round-robin (one pending), a Deployment, a PriorityClass."""
    names = [f"worker-{i}" for i in range(nodes)]
    pod_items = [pod_item(f"web-{i}", names[i % nodes] if i < pods - 1 else None, owner=("ReplicaSet", "web-5d8f"))
                 for i in range(pods)]
    api = FakeAPI()
    api.lists = {
        "/api/v1/nodes": ("NodeList", [node_item(n) for n in names]),
        "/api/v1/pods": ("PodList", pod_items),
        "/api/v1/services": ("ServiceList", [service_item("web")]),
        "/apis/apps/v1/deployments": ("DeploymentList", [deployment_item("web", pods)]),
        "/apis/apps/v1/replicasets": ("ReplicaSetList", []),
        "/apis/apps/v1/statefulsets": ("StatefulSetList", []),
        "/apis/apps/v1/daemonsets": ("DaemonSetList", []),
        "/apis/batch/v1/jobs": ("JobList", []),
        "/apis/batch/v1/cronjobs": ("CronJobList", []),
        "/apis/scheduling.k8s.io/v1/priorityclasses": ("PriorityClassList", [priority_class_item("high", 1000)]),
        "/api/v1/resourcequotas": ("ResourceQuotaList", []),
        "/api/v1/limitranges": ("LimitRangeList", []),
        "/apis/policy/v1/poddisruptionbudgets": ("PodDisruptionBudgetList", []),
        "/apis/resource.k8s.io/v1/deviceclasses": ("DeviceClassList", []),
        "/apis/resource.k8s.io/v1/resourceslices": ("ResourceSliceList", []),
        "/apis/resource.k8s.io/v1/resourceclaims": ("ResourceClaimList", []),
        "/apis/resource.k8s.io/v1/resourceclaimtemplates": ("ResourceClaimTemplateList", []),
        # topology.node.k8s.io not installed: 404, as on a cluster without the NRT CRD
    }
    api.configz = {n: {"enableServer": True, "cpuManagerPolicy": "static", "cpuManagerReconcilePeriod": "10s",
                       "topologyManagerPolicy": "single-numa-node", "kubeReserved": {"cpu": "500m"},
                       "reservedSystemCPUs": "0", "maxPods": 110} for n in names}
    return api
