"""``kgen.black_lines``: black's output of a rendered module, black run only where needed.

Each test compares with black itself on modules shaped like the templates' output, with
names of every length around the line limit (the layouts written without black, the
element-wise path, the batch of logical lines black formats, the whole-module fallback),
and checks which path was taken by what black was asked to format.
"""

from __future__ import annotations

import black
import black.report
import pytest
from black.parsing import InvalidInput
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgen.black_lines import format_long_lines
from kgen.write import _black_mode


def _black(source: str) -> str:
    try:
        return black.format_file_contents(source, fast=True, mode=_black_mode())
    except black.report.NothingChanged:
        return source


class _Recorder:
    """Black, recording what it was asked to format."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, source: str) -> str:
        self.calls.append(source)
        return _black(source)


def _never(source: str) -> str:
    raise AssertionError(f"black ran on:\n{source}")


def _name(length: int, first: str = "N") -> str:
    return (first + "ame" * length)[:length]


_lengths = st.integers(min_value=1, max_value=110)
_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _module(*blocks: str) -> str:
    """A module of ``blocks`` with black's blank lines: two around a class, else one."""
    source = '"""Generated."""\n\nfrom __future__ import annotations\n'
    after_class = False
    for block in blocks:
        is_class = block.startswith("class ")
        source += ("\n\n" if is_class or after_class else "\n") + block
        after_class = is_class
    return source


def test_known_layouts_are_blacks_without_running_black() -> None:
    """Class headers, union-annotated fields (models' ``| None = None``, apply
    configurations' ``| Unset | None = UNSET``) and aliases, with names of every length up
    to past the limit, come out as black writes them, and black is not run."""
    fields = "".join(
        f"    {field}: {item} | None = None\n"
        f"    {field}_l: list[{item}] | None = None\n"
        f"    {field}_a: mod.{item} | Unset | None = UNSET\n"
        f"    {field}_m: list[mod.{item}] | {item} | Unset | None = UNSET\n"
        for field in (_name(n, "f").lower() for n in (1, 30, 70))
        for item in (_name(n, "I") for n in range(40, 105))
    )
    headers = [
        f"class {_name(n, 'M')}(mod.{_name(n // 2, 'B')}):\n    x: int\n" for n in range(60, 111)
    ]
    aliases = "".join(
        f"{_name(n, 'A')} = {_name(k, 'T')}\n{_name(n, 'C')} = mod.{_name(k, 'T')}\n"
        for n in (1, 30, 60, 90)
        for k in range(40, 100)
    )
    source = _module(f'class Model(KubeModel):\n    """Doc."""\n\n{fields}', *headers, aliases)
    assert format_long_lines(source, _never) == _black(source)


@_settings
@given(key=_lengths, value=_lengths, entries=st.integers(min_value=1, max_value=4))
def test_long_elements_of_exploded_collections_alone_go_to_black(
    key: int, value: int, entries: int
) -> None:
    """In a collection written one element a line, only the elements that do not fit are
    formatted, in the statement's brackets; lone strings and names never are."""
    items = "".join(
        f'        "{_name(key + i, "k")}": {{"x-list": ["{_name(value, "v")}"], "t": "map"}},\n'
        for i in range(entries)
    )
    exports = "".join(f'    "{_name(key + value + i)}",\n' for i in range(entries))
    source = _module(
        f"__all__ = [\n{exports}]\n",
        "class Model(KubeModel):\n"
        '    """Doc."""\n\n'
        f"    __kgen_schema__: ClassVar[dict[str, dict[str, Any]]] = {{\n{items}    }}\n"
        "    api_version: str = Field(\n"
        f'        default="{_name(value, "g")}/v1",\n'
        '        validation_alias="apiVersion",\n'
        "    )\n",
    )
    recorder = _Recorder()
    assert format_long_lines(source, recorder) == _black(source)
    for call in recorder.calls:
        assert "__all__" not in call
        assert "class Model" not in call


@_settings
@given(field=_lengths, values=st.lists(_lengths, min_size=1, max_size=8), doc=_lengths)
def test_other_long_lines_are_formatted_by_black_in_one_batch(
    field: int, values: list[int], doc: int
) -> None:
    """Lines without a known layout (enums, defaults, deep-copy comprehensions, a block's
    docstring whose closing quotes black moves) go to black together, each in its block."""
    field_name = _name(field, "f").lower()
    enum = ", ".join(f'"{_name(v, "e")}"' for v in values)
    text = "word " * (doc // 5) + _name(doc, "w")
    source = _module(
        "class Model(KubeModel):\n"
        f'    """Doc\n    {text}."""\n\n'
        f"    {field_name}: Literal[{enum}] | str | None = None\n"
        f'    """{text}."""\n'
        f'    {field_name}_d: str | None = Field(default="{_name(doc, "d")}", alias="x")\n'
        "\n"
        "    def deepcopy(self) -> Self:\n"
        "        d = self.__dict__.copy()\n"
        f'        if (v := d["{field_name}"]) is not None:\n'
        f'            d["{field_name}"] = [i0.deepcopy() for i0 in v]\n'
        "        return self._kgen_new(self, d)\n",
    )
    recorder = _Recorder()
    assert format_long_lines(source, recorder) == _black(source)
    assert len(recorder.calls) <= 1
    if recorder.calls:
        assert "def deepcopy" not in recorder.calls[0]


def test_a_module_that_fits_is_returned_as_it_is() -> None:
    source = _module('class Short(KubeModel):\n    """Doc."""\n\n    x: int | None = None\n')
    assert format_long_lines(source, _never) is source


@pytest.mark.parametrize(
    "body",
    [
        # A second block (else), a long decorator: not shapes the splice handles.
        f"if x:\n    y = 1\nelse:\n    {_name(90).lower()} = call({_name(20).lower()})\n",
        f"@decorator({_name(100).lower()})\ndef f() -> None:\n    pass\n",
    ],
)
def test_unknown_shapes_go_to_black_whole(body: str) -> None:
    recorder = _Recorder()
    assert format_long_lines(body, recorder) == _black(body)
    assert recorder.calls == [body]


@pytest.mark.parametrize("last", [80, 84, 85, 86, 95])
def test_a_long_module_docstring_is_formatted_as_the_modules(last: int) -> None:
    """Black moves the closing quotes of a module docstring whose last line leaves no room
    for them, as for a class's; it is the first logical line black sees, so its role holds."""
    source = (
        f'"""{"word " * 20}\n{_name(last)}."""\n\nfrom x import y\n\n\n'
        f"class {_name(90)}(KubeModel):\n    z: int\n\n\n{_name(90)} = call({_name(5)})\n"
    )
    recorder = _Recorder()
    assert format_long_lines(source, recorder) == _black(source)
    assert len(recorder.calls) == 1  # the docstring and the call, not the whole module
    assert "from x import y" not in recorder.calls[0]


def test_a_batch_black_rejects_falls_back_to_the_whole_module() -> None:
    source = f"x = call({_name(100).lower()})\n"

    def whole_modules_only(text: str) -> str:
        if text != source:
            raise InvalidInput("cannot parse")
        return _black(text)

    assert format_long_lines(source, whole_modules_only) == _black(source)


def test_a_module_that_does_not_parse_fails_as_black_does() -> None:
    source = f"x = ({_name(100)}\n"
    with pytest.raises(InvalidInput):
        format_long_lines(source, _black)


def test_formatting_is_the_same_with_lines_remembered_from_other_modules() -> None:
    """A logical line formatted for one module is reused in the next (corpora repeat
    them), without changing either result."""
    enum = ", ".join(['"abcdefghij"'] * 6)
    line = f"    {_name(40).lower()}: Literal[{enum}] | None = None\n"
    first = _module(f'class First(KubeModel):\n    """Doc."""\n\n{line}')
    second = _module(f'class Second(KubeModel):\n    """Doc."""\n\n{line}')
    format_long_lines(first, _black)
    assert format_long_lines(second, _never) == _black(second)
