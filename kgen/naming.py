"""Every naming decision of the generator, made once so all emitters agree.

* Attributes are snake_case versions of wire names, escaped when they are Python keywords,
  names the generated class body itself uses (``str``, ``int``…), or attributes of pydantic's
  ``BaseModel`` and kgen's model base (``schema``, ``json``, ``copy``, ``model_*``,
  ``deepcopy``…). Escaping appends ``_``; collisions (``fooBar`` and ``foo_bar``) get a further
  ``_`` in schema order, so the first spelling keeps the plain name.
* Class names are UpperCamelCase joins of the schema path (``FooSpecTemplate``).
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable

from pydantic import BaseModel

__all__ = [
    "RESERVED_MODULE_NAMES",
    "attribute_name",
    "camel_words",
    "class_name",
    "constant_name",
    "module_name",
    "singular",
    "unique",
]

# Names a generated class body evaluates while it is being defined: shadowing one with a
# field would break the annotations of the fields after it.
_CLASS_BODY_NAMES = frozenset(
    {
        "str",
        "int",
        "float",
        "bool",
        "dict",
        "list",
        "object",
        "None",
        "Any",
        "ClassVar",
        "Field",
        "Literal",
        "FieldRules",
    }
)
_MODEL_ATTRIBUTES = frozenset(
    {name for name in dir(BaseModel) if not name.startswith("__")}
    | {"deepcopy", "fields", "schema", "json", "copy", "dict", "validate", "construct"}
)
# Names a generated models module imports or defines besides its classes.
RESERVED_MODULE_NAMES = frozenset(
    {
        "Any",
        "ClassVar",
        "Field",
        "Literal",
        "FieldRules",
        "KubeList",
        "KubeModel",
        "KubeObject",
        "ListMeta",
        "ObjectMeta",
        "Unstructured",
        "Resource",
        "ScaleSubresource",
        "GroupVersion",
    }
    | set(dir(builtins))
)

_PLURAL_ACRONYM = re.compile(r"([A-Z]{2,})s(?=$|[^a-z])")
_SPLIT_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_SPLIT_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")


def _snake(text: str) -> str:
    text = _PLURAL_ACRONYM.sub(r"\1S", text)  # podIPs → pod_ips, not pod_i_ps
    text = _SPLIT_ACRONYM.sub(r"\1_\2", text)
    text = _SPLIT_LOWER_UPPER.sub(r"\1_\2", text)
    return _NON_WORD.sub("_", text).strip("_").lower()


def attribute_name(wire_name: str) -> str:
    """The Python attribute for a wire field name, before collision handling.

    Never starts with an underscore (pydantic would treat it as private) or a digit.
    """
    name = _snake(wire_name) or "field"
    if name[0].isdigit():
        name = f"field_{name}"
    if (
        keyword.iskeyword(name)
        or (keyword.issoftkeyword(name) and name == "_")
        or name in _CLASS_BODY_NAMES
        or name in _MODEL_ATTRIBUTES
        or name.startswith("model_")
    ):
        name += "_"
    return name


def camel_words(text: str) -> str:
    """``deploymentName`` → ``DeploymentName``; ``hugepages-1Gi`` → ``Hugepages1Gi``."""
    parts = [p for p in _NON_WORD.split(text) if p]
    return "".join(p[0].upper() + p[1:] for p in parts)


def class_name(parts: Iterable[str]) -> str:
    """Join path parts into a class name; always a valid identifier starting uppercase."""
    name = "".join(camel_words(p) for p in parts) or "Type"
    if not name[0].isalpha():
        name = f"T{name}"
    return name


def singular(word: str) -> str:
    """A conservative English singular for naming the items of a list field."""
    lower = word.lower()
    if lower.endswith("ies") and len(word) > 3:
        return word[:-3] + "y"
    if lower.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and len(word) > 1:
        return word[:-1]
    return f"{word}Item"


def constant_name(kind: str) -> str:
    """``FooBar`` → ``FOO_BAR`` (for module-level constants such as ``FOO_BAR_RESOURCE``)."""
    return _snake(kind).upper() or "KIND"


def module_name(text: str) -> str:
    """A lowercase Python module name for a group label or version."""
    name = _snake(text) or "group"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"g_{name}"
    return name


def unique(name: str, taken: set[str], suffix: str = "_") -> str:
    """Return ``name`` or the first free variant of it, and mark it taken.

    With the default suffix, variants are ``name_``, ``name__``…; with ``suffix="2"`` they
    are ``name2``, ``name3``… (for class names).
    """
    candidate = name
    counter = 2
    while candidate in taken:
        if suffix == "_":
            candidate += "_"
        else:
            candidate = f"{name}{counter}"
            counter += 1
    taken.add(candidate)
    return candidate
