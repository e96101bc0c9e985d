"""kubetwin serve: a loaded cluster over HTTP — the what-if API, the kube-scheduler extender
(``pkg/scheduler/extender.go``), simulation jobs, /metrics and the web UI's assets."""
