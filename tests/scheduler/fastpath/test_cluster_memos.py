"""Specifications of ``kubetwin.scheduler.fastpath.cluster_memos``: one memo per cluster state."""

from kubetwin.scheduler.fastpath.cluster_memos import ClusterMemos


class _Cluster:
    pass


def test_a_cluster_gets_the_same_memo_each_time_it_is_asked_about() -> None:
    memos, a, b = ClusterMemos(), _Cluster(), _Cluster()
    first = memos.of(a)
    first["k"] = 1
    memos.of(b)
    assert memos.of(a) is first and memos.of(a)["k"] == 1


def test_two_clusters_have_separate_memos() -> None:
    memos, a, b = ClusterMemos(), _Cluster(), _Cluster()
    assert memos.of(a) is not memos.of(b)
