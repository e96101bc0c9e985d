"""Memory Manager: policies ``None`` and ``Static`` (``pkg/kubelet/cm/memorymanager``)."""
