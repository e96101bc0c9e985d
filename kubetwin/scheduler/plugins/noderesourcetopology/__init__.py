"""NodeResourceTopologyMatch (kubernetes-sigs/scheduler-plugins ``pkg/noderesourcetopology``):
the plugin (:mod:`.plugin`), its args (:mod:`.args`) and the NodeResourceTopology objects it
reads (:mod:`.nrt`)."""

NAME = "NodeResourceTopologyMatch"
