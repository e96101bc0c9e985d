"""The Node Resource Interface (containerd/nri v0.12.2) as the runtime drives it.

``api``: the protocol's messages with NRI's field names, written in their protobuf JSON
shape; ``owners``: which plugin set which field of which container, and the conflict rule;
``adaptation``: the runtime side (plugins ordered by index, events relayed, results merged
and applied); ``stub``: the public Python plugin API, in the shape of NRI's Go stub.
"""
