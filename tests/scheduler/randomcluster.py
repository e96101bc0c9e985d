"""Random clusters and pods for the property tests: labels, taints, cordons, extended resources,
host ports, pods already bound; requests, selectors, node and pod (anti-)affinity, tolerations,
ports, spread constraints."""

from __future__ import annotations

import random

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.profile import Profile
from kubetwin.scheduler.scheduler import Scheduler

ZONES = ["a", "b", "c"]
DISKS = ["ssd", "hdd"]


def random_node(rng: random.Random, i: int) -> Node:
    labels = {"kubernetes.io/hostname": f"n{i}"}
    if rng.random() < 0.9:
        labels["topology.kubernetes.io/zone"] = rng.choice(ZONES)
    if rng.random() < 0.6:
        labels["disk"] = rng.choice(DISKS)
    if rng.random() < 0.3:
        labels["gen"] = str(rng.randint(1, 5))
    taints = []
    if rng.random() < 0.15:
        taints.append({"key": "dedicated", "value": rng.choice(["gpu", "db"]), "effect": "NoSchedule"})
    if rng.random() < 0.25:
        taints.append({"key": "spot", "effect": "PreferNoSchedule"})
    alloc = {"cpu": rng.choice(["2", "4", "8", "3500m"]), "memory": rng.choice(["4Gi", "8Gi", "16Gi"]),
             "pods": str(rng.choice([3, 5, 110]))}
    if rng.random() < 0.3:
        alloc["example.com/gpu"] = str(rng.randint(0, 4))
    if rng.random() < 0.1:
        alloc["ephemeral-storage"] = "20Gi"
    return convert({"metadata": {"name": f"n{i}", "labels": labels},
                    "spec": {"taints": taints, "unschedulable": rng.random() < 0.05},
                    "status": {"allocatable": alloc}}, Node)


def random_pod(rng: random.Random, name: str, node: str | None = None) -> Pod:
    req: dict = {}
    if rng.random() < 0.8:
        req["cpu"] = rng.choice(["100m", "250m", "500m", "1", "2"])
    if rng.random() < 0.8:
        req["memory"] = rng.choice(["128Mi", "512Mi", "1Gi", "3Gi"])
    if rng.random() < 0.15:
        req["example.com/gpu"] = str(rng.randint(1, 2))
    container: dict = {"name": "c", "resources": {"requests": req}}
    if rng.random() < 0.1:
        container["ports"] = [{"containerPort": 80, "hostPort": rng.choice([80, 443])}]
    spec: dict = {"containers": [container]}
    if rng.random() < 0.3:
        spec["containers"].append({"name": "d"})
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"disk": rng.choice(DISKS)}
    aff: dict = {}
    if rng.random() < 0.2:
        op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
        expr: dict = {"key": rng.choice(["topology.kubernetes.io/zone", "gen", "disk"]), "operator": op}
        if op in ("In", "NotIn"):
            expr["values"] = rng.sample(ZONES + DISKS, 2)
        elif op in ("Gt", "Lt"):
            expr["values"] = [str(rng.randint(1, 5))]
        term: dict = {"matchExpressions": [expr]}
        if rng.random() < 0.2:
            term["matchFields"] = [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]
        aff["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    if rng.random() < 0.3:
        aff.setdefault("nodeAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                {"key": "disk", "operator": "In", "values": [rng.choice(DISKS)]}]}},
            {"weight": rng.randint(0, 5), "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "Exists"}]}}]
    if rng.random() < 0.15:
        term: dict = {"topologyKey": rng.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone", "disk"]),
                      "labelSelector": rng.choice([{"matchLabels": {"app": "x"}}, {"matchLabels": {"tier": "a"}}])}
        r = rng.random()
        if r < 0.2:
            term["namespaces"] = ["other"]
        elif r < 0.35:
            term["namespaceSelector"] = {}
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    if rng.random() < 0.1:
        terms = [{"topologyKey": rng.choice(["topology.kubernetes.io/zone", "disk"]),
                  "labelSelector": {"matchLabels": {"app": rng.choice(["x", "y"])}}}]
        if rng.random() < 0.3:
            terms.append({"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"tier": "a"}}})
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": terms}
    if aff:
        spec["affinity"] = aff
    if rng.random() < 0.3:
        spec["tolerations"] = [rng.choice([{"key": "dedicated", "operator": "Equal", "value": "gpu"},
                                           {"key": "spot", "operator": "Exists"},
                                           {"operator": "Exists"},
                                           {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])]
    if rng.random() < 0.15:
        tsc: dict = {"maxSkew": rng.choice([1, 2]),
                     "topologyKey": rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname", "disk"]),
                     "whenUnsatisfiable": rng.choice(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"]),
                     "labelSelector": rng.choice([{"matchLabels": {"app": "x"}}, {}, {"matchExpressions": [
                         {"key": "app", "operator": "In", "values": ["x", "y"]}]}])}
        if rng.random() < 0.3:
            tsc["minDomains"] = rng.randint(1, 4)
        if rng.random() < 0.3:
            tsc["nodeTaintsPolicy"] = "Honor"
        if rng.random() < 0.2:
            tsc["nodeAffinityPolicy"] = "Ignore"
        if rng.random() < 0.2:
            tsc["matchLabelKeys"] = ["tier"]
        spec["topologySpreadConstraints"] = [tsc]
    if node:
        spec["nodeName"] = node
    labels = {"app": rng.choice(["x", "y"]), "tier": rng.choice(["a", "b"])}
    meta: dict = {"name": name, "namespace": rng.choice(["default", "default", "other"]), "labels": labels}
    if node and rng.random() < 0.1:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return convert({"metadata": meta, "spec": spec}, Pod)


def scheduler_pair(seed: int, n_nodes: int, profile: Profile | None = None):
    rng = random.Random(seed)
    nodes = [random_node(rng, i) for i in range(n_nodes)]
    running = [random_pod(rng, f"r{k}", f"n{rng.randrange(n_nodes)}") for k in range(n_nodes)]
    gates = gates_for()
    fast = Scheduler(profile, nodes, gates, seed, pods=running)
    slow = Scheduler(profile, nodes, gates, seed, pods=running, vectorised=False)
    return rng, fast, slow
