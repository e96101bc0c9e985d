"""The pod-set fingerprint of ``k8stopologyawareschedwg/podfingerprint`` (v0.2.2,
``podfingerprint.go``): how a node agent (NFD topology-updater) says which pods a
NodeResourceTopology was computed from, and how the scheduler-plugins NRT cache checks it.

Each pod is hashed as ``xxh64(name, seed=xxh64(namespace))``; the hashes are sorted, written as
little-endian 8-byte words and hashed again with xxh64 (seed 0); the signature is ``pfp0`` +
``v001`` + the digest in hex. Checked against upstream's own test data (259 pods →
``pfp0v001e477a4e3b2fc0ec6``).
"""

from __future__ import annotations

from typing import Iterable

import xxhash

PREFIX = "pfp0"
VERSION = "v001"
#: the NodeResourceTopology attribute (and the older annotation) holding the signature
ATTRIBUTE = "nodeTopologyPodsFingerprint"
ATTRIBUTE_METHOD = "nodeTopologyPodsFingerprintMethod"
ANNOTATION = "topology.node.k8s.io/fingerprint"
METHOD_ALL = "all"
METHOD_WITH_EXCLUSIVE_RESOURCES = "with-exclusive-resources"


class FingerprintError(ValueError):
    """``ErrMalformed`` / ``ErrIncompatibleVersion`` / ``ErrSignatureMismatch``."""


def sign(pods: Iterable[tuple[str, str]]) -> str:
    """``Fingerprint.Sign`` over (namespace, name) pairs (order does not matter)."""
    hashes = sorted(xxhash.xxh64_intdigest(name.encode(), seed=xxhash.xxh64_intdigest(ns.encode()))
                    for ns, name in pods)
    return PREFIX + VERSION + xxhash.xxh64_hexdigest(b"".join(h.to_bytes(8, "little") for h in hashes))


def check(pods: Iterable[tuple[str, str]], signature: str) -> None:
    """``Fingerprint.Check``: raises :class:`FingerprintError` as upstream returns its errors."""
    if len(signature) < 16 or signature[:4] != PREFIX:
        raise FingerprintError("malformed fingerprint")
    if signature[4:8] != VERSION:
        raise FingerprintError("incompatible version")
    got = sign(pods)[8:]
    if got != signature[8:]:
        raise FingerprintError(f"fingerprint mismatch got={got!r} expected={signature[8:]!r}")
