"""``kubetwin serve``'s HTTP API, fed hostile requests (``http.py``), answers every one with a
JSON object — a refusal as a 4xx naming the problem — never a 500, a hang or an answer to a
known-invalid body. CI runs a few dozen requests; ``python -m tests.fuzz.http --cases N`` more."""

from __future__ import annotations

import os

from .http import Request, campaign, judge

CASES = int(os.environ.get("KUBETWIN_FUZZ_HTTP_CASES", "40"))
SEED = int(os.environ.get("KUBETWIN_FUZZ_SEED", "0"))


def test_hostile_requests_are_answered_or_refused_cleanly():
    statuses, failures = campaign(CASES, SEED)
    assert sum(statuses.values()) == CASES
    assert not failures, [(f.kind, f.request.what, f.detail) for f in failures]


def _req(known_invalid: bool = False, method: str = "POST", path: str = "/api/v1/schedule") -> Request:
    return Request("base", method, path, b"{}", known_invalid, "test")


def test_a_500_is_a_failure():
    f = judge(_req(), 500, b'{"error": "internal error: KeyError"}', 0.1, 30)
    assert f is not None and f.kind == "internal"


def test_an_answer_to_a_known_invalid_body_is_a_failure():
    f = judge(_req(known_invalid=True), 200, b"{}", 0.1, 30)
    assert f is not None and f.kind == "answered-invalid"


def test_a_refusal_without_an_error_is_a_failure():
    f = judge(_req(), 400, b'{"detail": "bad"}', 0.1, 30)
    assert f is not None and f.kind == "bad-error"


def test_a_refusal_naming_the_problem_passes():
    assert judge(_req(known_invalid=True), 400, b'{"error": "unknown field"}', 0.1, 30) is None


def test_an_answer_after_the_time_limit_is_a_hang():
    f = judge(_req(), 200, b"{}", 31, 30)
    assert f is not None and f.kind == "hang"
