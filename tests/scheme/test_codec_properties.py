"""Property tests: any JSON content survives decode → encode (JSON and YAML) unchanged."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgen_runtime.codec import decode, decode_all, encode, encode_yaml
from kgen_runtime.meta import Unstructured
from kgen_runtime.scheme import Scheme

SCHEME = Scheme()
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
DOCUMENTS = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["v1", "x.io/v1", "a.b.c/v1beta2"]),
        "kind": st.sampled_from(["Thing", "Pod"]),
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "name": TEXT,
                "labels": st.dictionaries(TEXT, TEXT, max_size=3) | st.none(),
                "annotations": st.dictionaries(TEXT, TEXT, max_size=3),
                "generation": st.integers(min_value=0, max_value=2**40),
                "futureField": JSON,
            },
        ),
    },
    optional={"spec": JSON, "status": JSON, "data": st.dictionaries(TEXT, JSON, max_size=4)},
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(DOCUMENTS)
def test_json_round_trip_is_lossless(document: dict[str, Any]) -> None:
    obj = decode(orjson.dumps(document), SCHEME)
    assert type(obj) is Unstructured
    assert orjson.loads(encode(obj, SCHEME)) == document
    assert obj.deepcopy().model_dump() == document


@FAST
@given(st.lists(DOCUMENTS, min_size=1, max_size=3))
def test_yaml_round_trip_is_lossless(documents: list[dict[str, Any]]) -> None:
    objects = [decode(orjson.dumps(d), SCHEME) for d in documents]
    text = "---\n".join(encode_yaml(o, SCHEME) for o in objects)
    assert [o.model_dump() for o in decode_all(text, SCHEME)] == documents
