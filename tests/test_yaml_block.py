"""The fast block-YAML writer: what it writes reads back as the data, laid out as PyYAML lays it out."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetwin.yaml_block import dump

_scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
            | st.floats(allow_nan=False) | st.text(max_size=12)
            | st.sampled_from(["yes", "No", "on", "~", "null", "0-3", "0x1f", "1_000", "1.5", "2001-12-14", "1:30",
                               "- a", "a: b", "#c", "'q'", '"d"', " lead", "trail ", "&x", "*y", "!t", "%p", "@", "`",
                               "", "a\nb", "tab\t", "\u00e9t\u00e9", "\x00", "256s1n256c1t", "app direct_mode"]))
_data = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8) | st.sampled_from(["yes", "1", "a b"]), inner, max_size=4),
                     max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(_data)
def test_what_is_written_reads_back_as_the_data(data):
    assert yaml.safe_load(dump(data)) == data


def test_layout_is_pyyamls_for_plain_documents():
    doc = {"apiVersion": "v1", "items": [{"name": "a", "cpus": [0, 1], "caches": [], "x": {}},
                                         {"name": "0-3", "nested": {"deep": [[1, 2], {"k": None}]}}],
           "ratio": 0.5, "ok": True, "mode": "app direct_mode_capacity"}
    assert dump(doc) == yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def test_strings_a_yaml_reader_would_take_for_something_else_are_quoted():
    assert dump({"a": "yes", "b": "1.5", "c": "0x1f"}) == "a: 'yes'\nb: '1.5'\nc: '0x1f'\n"
