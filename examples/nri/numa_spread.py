"""numa-spread: a complete NRI resource policy written against kubetwin's plugin API.

Every container outside kube-system is pinned — CPUs and memory — to the NUMA node that holds
the fewest containers pinned so far (the lowest node id on a tie); a pod may ask for a node with
the annotation ``numa-spread.example.com/node: N``, and a pod asking for a node the machine does
not have is refused (its containers fail to create, as a Go plugin returning an error makes them
fail). When a container stops, its node counts one container less.

Run it on its own, or next to an nri-plugins policy (it registers at index 50, before the
resource manager's 90 — if both set a container's cpuset, NRI refuses the container: two
plugins set the same field)::

    kubetwin runtime --machine 2s2n8c2t --policy none --plugin examples/nri/numa_spread.py \\
        examples/nri/pods.yaml
"""

from __future__ import annotations

from kubetwin.runtime.nri.stub import Container, ContainerAdjustment, ContainerUpdate, Plugin, PodSandbox

NODE_ANNOTATION = "numa-spread.example.com/node"


class NumaSpread(Plugin):
    name = "numa-spread"
    index = "50"

    def configure(self, config: str, runtime: str, version: str) -> None:
        # self.machine is the node's hardware (what a plugin on a real node reads from /sys)
        self.cpus = {n.id: n.cpus for n in self.machine.nodes if n.cores}
        self.count = {nid: 0 for nid in self.cpus}
        self.placed: dict[str, int] = {}
        return None  # subscribe to the events whose methods this class defines

    def create_container(self, pod: PodSandbox, container: Container) -> ContainerAdjustment | None:
        if pod.namespace == "kube-system":
            return None
        wanted = pod.annotations.get(NODE_ANNOTATION)
        if wanted is not None:
            if not wanted.isdigit() or int(wanted) not in self.cpus:
                raise ValueError(f"{pod.namespace}/{pod.name}: no NUMA node {wanted} with CPUs on this node")
            node = int(wanted)
        else:
            node = min(self.count, key=lambda n: (self.count[n], n))
        self.count[node] += 1
        self.placed[container.id] = node
        adjust = ContainerAdjustment()
        adjust.set_linux_cpuset_cpus(str(self.cpus[node]))
        adjust.set_linux_cpuset_mems(str(node))
        return adjust

    def stop_container(self, pod: PodSandbox, container: Container) -> list[ContainerUpdate]:
        node = self.placed.pop(container.id, None)
        if node is not None:
            self.count[node] -= 1
        return []
