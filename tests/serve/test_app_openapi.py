"""Property tests of ``kubetwin serve`` against its own OpenAPI document (schemathesis): bounded
generated requests for every operation, and none may be answered with a 5xx (a timeout's 503
aside: the per-request time limit is kept high here)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from kubetwin.serve.app import create_app
from kubetwin.serve.cluster import load_cluster
from kubetwin.serve.limits import ServeLimits

from .cluster_fixture import write_scenario

_TMP = Path(tempfile.mkdtemp(prefix="kubetwin-serve-openapi-"))
APP = create_app(load_cluster([str(write_scenario(_TMP))]),
                 ServeLimits(request_timeout=120.0, max_concurrent=4, data_dir=_TMP))
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP)


# starting simulations is left out: each would run in the background through the other tests
# (the queue's bound and its 429 are specified in test_jobs.py and test_app.py)
@SCHEMA.exclude(path="/api/v1/simulations", method="POST").parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_is_answered_with_a_server_error(case):
    case.call_and_validate(checks=[not_a_server_error])
