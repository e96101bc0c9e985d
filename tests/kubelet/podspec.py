"""Small builders for pods in kubelet tests (manifest dicts in, typed pods out)."""

from kubetwin.model.meta import convert
from kubetwin.model.pod import Pod


def c(name, requests=None, limits=None, **extra):
    return {"name": name, "resources": {"requests": requests or {}, "limits": limits or {}}, **extra}


def sidecar(name, requests=None, limits=None):
    return c(name, requests, limits, restartPolicy="Always")


def make_pod(containers, init=(), resources=None, status=None, **spec):
    body = {"containers": list(containers), "initContainers": list(init), **spec}
    if resources is not None:
        body["resources"] = resources
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": body}
    if status is not None:
        obj["status"] = status
    return convert(obj, Pod)
