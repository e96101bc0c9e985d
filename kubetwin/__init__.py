"""kubetwin: an exact, fast model of Kubernetes resource management.

The public surface is organised by Kubernetes component: :mod:`kubetwin.model` (API objects
and quantities), :mod:`kubetwin.machine` (hardware topology), :mod:`kubetwin.kubelet` (one
node's decisions). See ``docs/architecture.md``.

Not an upstream module: kubetwin's own package root.
"""

__version__ = "0.1.0"
