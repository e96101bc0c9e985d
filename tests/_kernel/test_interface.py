"""A C kernel built from older sources than the Python code is not used: its Python twin runs."""

from __future__ import annotations

import types

import pytest

from kubetwin import _kernel


def test_a_kernel_of_the_expected_interface_is_used() -> None:
    assert _kernel.current(types.SimpleNamespace(__name__="k", INTERFACE=3), 3)


def test_a_kernel_built_from_older_sources_is_not_used_and_says_how_to_rebuild() -> None:
    with pytest.warns(RuntimeWarning, match="scripts/setup"):
        assert not _kernel.current(types.SimpleNamespace(__name__="k", INTERFACE=1), 2)


def test_a_kernel_without_an_interface_is_not_used() -> None:
    with pytest.warns(RuntimeWarning):
        assert not _kernel.current(types.SimpleNamespace(__name__="k"), 1)


def test_the_built_kernels_speak_the_interfaces_their_python_side_expects() -> None:
    from kubetwin.runtime.policies.balloons import treekernel
    from kubetwin.sim import runtime_copy

    try:
        from kubetwin._kernel import _graphcopy, _treesearch
    except ImportError:
        pytest.skip("the C kernels are not built here")
    assert _graphcopy.INTERFACE == runtime_copy.GRAPHCOPY_INTERFACE
    assert _treesearch.INTERFACE == treekernel.INTERFACE
