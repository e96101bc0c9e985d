"""Reading a live cluster, read-only, for ``kubetwin snapshot --kubeconfig``: the connection as
kubectl resolves it (``k8s.io/client-go/tools/clientcmd``, through the ``kubernetes`` client's
kubeconfig loader), GETs with client-go's retry and pager rules, responses decoded by kubetwin's
strict typed models.

* :mod:`.config` — kubeconfig / ``$KUBECONFIG`` / in-cluster config to a :class:`~.config.Cluster`
* :mod:`.client` — GET, ``Retry-After``, Status errors, paginated LIST
* :mod:`.read` — the kinds a snapshot reads, each node's ``/configz``
"""
