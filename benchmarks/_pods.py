"""Generate realistic pod manifests (deployment-style, ~2 KB each) for the loading benchmarks."""

from __future__ import annotations

import random


def typical_pod(i: int, rng: random.Random) -> dict:
    app = f"app-{i % 97}"
    cpu = rng.choice(["100m", "250m", "500m", "1", "2", "4"])
    mem = rng.choice(["128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"])
    container = {
        "name": "main",
        "image": f"registry.example.com/team/{app}:v1.{i % 13}.0",
        "args": ["--port=8080", "--log-level=info", f"--shard={i % 16}"],
        "env": [{"name": f"ENV_{k}", "value": f"value-{k}-{i}"} for k in range(6)],
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"},
                  {"containerPort": 9090, "name": "metrics", "protocol": "TCP"}],
        "resources": {"requests": {"cpu": cpu, "memory": mem},
                      "limits": {"cpu": cpu, "memory": mem} if i % 3 == 0 else {"memory": mem}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
        "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "initialDelaySeconds": 15},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "scratch", "mountPath": "/tmp"}],
    }
    sidecar = {"name": "proxy", "image": "registry.example.com/mesh/proxy:1.22", "restartPolicy": "Always",
               "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{app}-{i:06d}-x7k2p",
            "namespace": f"team-{i % 7}",
            "uid": f"00000000-0000-4000-8000-{i:012d}",
            "labels": {"app": app, "tier": rng.choice(["web", "batch", "db"]), "pod-template-hash": "5d8c7b9f4"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-5d8c7b9f4",
                                 "uid": f"10000000-0000-4000-8000-{i % 97:012d}", "controller": True}],
        },
        "spec": {
            "containers": [container],
            "initContainers": [sidecar] if i % 2 else [],
            "priorityClassName": rng.choice(["", "high", "low"]),
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}},
                                                    "topologyKey": "kubernetes.io/hostname"}}]}},
            "volumes": [{"name": "config", "configMap": {"name": f"{app}-config"}},
                        {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}],
            "terminationGracePeriodSeconds": 30,
        },
    }


def typical_pods(n: int, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    return [typical_pod(i, rng) for i in range(n)]
