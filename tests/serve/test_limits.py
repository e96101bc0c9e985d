"""Specifications of the service's limits (``kubetwin.serve.limits``)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.serve.limits import in_data_dir, read_token, token_matches


def test_no_token_configured_lets_every_request_in():
    assert token_matches(None, None)


def test_the_bearer_token_must_match_exactly():
    assert token_matches("abc", "Bearer abc")
    assert not token_matches("abc", "Bearer abd")
    assert not token_matches("abc", "abc")
    assert not token_matches("abc", None)


def test_a_token_file_holds_one_token(tmp_path):
    (tmp_path / "t").write_text("s3cret\n")
    assert read_token(str(tmp_path / "t")) == "s3cret"


def test_an_empty_token_file_is_refused(tmp_path):
    (tmp_path / "t").write_text("\n")
    with pytest.raises(InputError, match="one token"):
        read_token(str(tmp_path / "t"))


def test_a_missing_token_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read_token(str(tmp_path / "nope"))


def test_a_file_inside_the_data_dir_is_resolved(tmp_path):
    (tmp_path / "a.yaml").write_text("x")
    assert in_data_dir(tmp_path, "a.yaml", "config") == (tmp_path / "a.yaml").resolve()


def test_a_path_climbing_out_of_the_data_dir_is_refused(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "secret").write_text("x")
    with pytest.raises(InputError, match="outside the data folder"):
        in_data_dir(tmp_path / "data", "../secret", "config")


def test_an_absolute_path_outside_the_data_dir_is_refused(tmp_path):
    with pytest.raises(InputError, match="outside the data folder"):
        in_data_dir(tmp_path, "/etc/hostname", "config")


def test_a_symlink_out_of_the_data_dir_is_refused(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "secret").write_text("x")
    (tmp_path / "data" / "link").symlink_to(tmp_path / "secret")
    with pytest.raises(InputError, match="outside the data folder"):
        in_data_dir(tmp_path / "data", "link", "config")


def test_without_a_data_dir_no_file_is_read(tmp_path):
    with pytest.raises(InputError, match="--data-dir"):
        in_data_dir(None, "a.yaml", "config")
