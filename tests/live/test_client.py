"""GETs with client-go's rules: which answers are retried and how long after, and the Status of
those that are not."""

from __future__ import annotations

import pytest

from kubetwin.live.client import Client, StatusError, retry_after
from kubetwin.live.config import load

from .fakeapi import cluster, kubeconfig


def test_retry_after_is_whole_seconds():
    assert retry_after("7") == 7 and retry_after(" 0 ") == 0


def test_retry_after_as_an_http_date_or_negative_is_no_wait():
    assert retry_after("Wed, 21 Oct 2026 07:28:00 GMT") is None and retry_after("-1") is None


@pytest.fixture
def served(tmp_path):
    api = cluster()
    server, url = api.serve()
    sleeps: list[float] = []
    yield api, Client(load(kubeconfig(tmp_path, url)), sleep=sleeps.append), sleeps
    server.shutdown()


def test_a_429_without_retry_after_is_not_retried(served):
    api, client, sleeps = served
    api.throttle["/api/v1/nodes"] = 1
    api.retry_after = ""
    with pytest.raises(StatusError) as err:
        client.get("/api/v1/nodes")
    assert err.value.code == 429 and err.value.reason == "TooManyRequests" and sleeps == []


def test_a_wait_is_capped(served):
    api, client, sleeps = served
    api.throttle["/api/v1/nodes"] = 1
    api.retry_after = "3600"
    client.get("/api/v1/nodes")
    assert sleeps == [60.0]


def test_an_error_keeps_the_status_reason_and_message(served):
    api, client, _ = served
    with pytest.raises(StatusError) as err:
        client.get("/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies")
    assert (err.value.code, err.value.reason) == (404, "NotFound")
    assert err.value.message == "the server could not find the requested resource"


def test_a_list_is_read_page_by_page_until_continue_is_empty(served):
    api, client, _ = served
    client.page_size = 3
    assert len(client.list_pages("/api/v1/pods")) == 3


def test_a_list_that_keeps_expiring_is_an_error_after_bounded_restarts(served):
    api, client, _ = served
    client.page_size = 3
    api.expire_always.add("/api/v1/pods")
    with pytest.raises(StatusError) as err:
        client.list_pages("/api/v1/pods")
    assert err.value.code == 410
