"""DefaultBinder: binds the pod to its node through the API server
(``pkg/scheduler/framework/plugins/defaultbinder/default_binder.go``: a ``Binding`` posted for
the pod).

kubetwin's API server is the scheduler's cache: by the time Bind runs, the cache has assumed the
pod on its node (``AssumePod``, :meth:`~kubetwin.scheduler.backend.cache.ClusterState.bind`),
which is all a posted Binding would change here. So Bind succeeds with nothing left to do, and
says so (:attr:`DefaultBinder.binds_through_cache`) so that the long-running scheduler need not
run a Bind phase for it."""

from __future__ import annotations

from typing import ClassVar

from ....model.pod import Pod
from ...framework.interface import CycleState, Plugin
from ...framework.status import SUCCESS, Status
from . import NAME


class DefaultBinder(Plugin):
    name = NAME
    #: the binding is the cache's assumed pod: Bind has no effect of its own
    binds_through_cache: ClassVar[bool] = True

    def bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        """``Bind``: the pod is bound (the cache already holds it on ``node``)."""
        return SUCCESS
