"""JSON and YAML documents ⇄ API objects, through a scheme (apimachinery's serializers).

``decode`` picks the class by the document's ``apiVersion``/``kind``: the scheme's class when
it knows the kind, :class:`Unstructured` (or :class:`UnstructuredList` for a document with an
``items`` list) when it does not, so nothing is ever dropped. (The one addition: items of an
unstructured list that name no type get the list's, ``PodList`` ⇒ ``Pod``, as in apimachinery.)
Decoding is lenient (see :class:`KubeModel`); it fails only on malformed documents, a missing
or malformed ``apiVersion``/``kind``, or values of the wrong JSON type, always with a
:class:`DecodeError` saying where.

YAML is read like ``sigs.k8s.io/yaml`` reads it: timestamps stay strings and non-string keys
(``on:``, ``1:``) become strings, so a YAML manifest and its JSON form decode identically.

Performance: JSON is parsed by ``orjson`` (the GC paused for large documents) and registered
kinds are built from its dicts without validation (:meth:`KubeModel.model_from_wire`: every
nested model built at once, so that a value of the wrong type anywhere is reported here, with
its position); such a value sends the document through pydantic's validation, so it is
coerced or rejected exactly as before. Encoding uses pydantic-core's serializer, 1.2-1.4x
faster than ``orjson.dumps(model_dump())``.

All functions are thread-safe and never mutate their arguments::

    >>> from kgen_runtime.scheme import Scheme
    >>> thing = decode("apiVersion: x.io/v1\\nkind: Thing\\nspec: {size: 3}\\n", Scheme())
    >>> type(thing).__name__, thing["spec"]
    ('Unstructured', {'size': 3})
    >>> encode(thing, Scheme())
    b'{"apiVersion":"x.io/v1","kind":"Thing","metadata":{},"spec":{"size":3}}'
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import orjson
import yaml  # type: ignore[import-untyped,unused-ignore]
from pydantic import ValidationError

from kgen_runtime.groupversion import GroupVersion, GroupVersionKind
from kgen_runtime.meta import APIObject, Unstructured, UnstructuredList, no_gc
from kgen_runtime.scheme import Scheme

__all__ = ["DecodeError", "decode", "decode_all", "encode", "encode_yaml"]

T = TypeVar("T", bound=APIObject)

class DecodeError(ValueError):
    """A document that cannot be turned into an object.

    Attributes:
        reason: what is wrong, without the position.
        line: 1-based line of the problem, when known (malformed JSON; any YAML problem).
        column: 1-based column, when known.
        document: 0-based index of the document in a multi-document stream, when known.
        loc: the field path of a value of the wrong type (``("spec", "replicas")``), else ``()``.
    """

    def __init__(
        self,
        reason: str,
        *,
        line: int | None = None,
        column: int | None = None,
        document: int | None = None,
        loc: tuple[str | int, ...] = (),
    ) -> None:
        self.reason = reason
        self.line = line
        self.column = column
        self.document = document
        self.loc = loc
        where = []
        if document is not None:
            where.append(f"document {document}")
        if line is not None:
            where.append(f"line {line}" + (f", column {column}" if column is not None else ""))
        message = f"{self.path}: {reason}" if loc else reason
        super().__init__(f"{', '.join(where)}: {message}" if where else message)

    @property
    def path(self) -> str | None:
        """``loc`` as a dotted string (``spec.replicas``), or None."""
        return ".".join(str(part) for part in self.loc) if self.loc else None

    def in_document(self, index: int, line: int | None, column: int | None) -> DecodeError:
        """This error placed in document ``index``, at ``line``/``column`` unless it has one."""
        known = self.line is not None
        return DecodeError(
            self.reason,
            line=self.line if known else line,
            column=self.column if known else column,
            document=index,
            loc=self.loc,
        )


def decode(data: bytes | str, scheme: Scheme) -> APIObject:
    """Decode one JSON or YAML document (JSON when it starts with ``{``).

    Returns:
        An instance of the class the scheme registers for the document's kind, else an
        :class:`Unstructured`/:class:`UnstructuredList` holding it losslessly.

    Raises:
        DecodeError: malformed, empty or multi-document input, missing or malformed
            ``apiVersion``/``kind``, or a value of the wrong JSON type.
    """
    if _is_json(data):
        return _decode_json(data, scheme)
    documents = list(_yaml_documents(data))
    if len(documents) != 1:
        found = "no document" if not documents else f"{len(documents)} documents"
        raise DecodeError(f"expected one document, found {found} (use decode_all)")
    return _decode_document(documents[0], scheme)


def decode_all(data: bytes | str, scheme: Scheme) -> list[APIObject]:
    """Decode every document of a YAML stream (or one JSON document), in order.

    Empty documents (``---`` followed by nothing or only comments) are skipped, as kubectl
    does; a ``kind: List`` document decodes as one list object, not flattened.

    Raises:
        DecodeError: as :func:`decode`, with the index of the failing document.
    """
    if _is_json(data):
        return [_decode_json(data, scheme)]
    return [_decode_document(document, scheme) for document in _yaml_documents(data)]


def encode(obj: APIObject, scheme: Scheme) -> bytes:
    """Encode to wire-format JSON; ``apiVersion``/``kind`` come from the scheme when empty.

    Raises:
        NotRegisteredError: the kind is empty and the scheme does not know the class.
    """
    if obj.api_version and obj.kind:
        return obj.model_dump_wire_json()
    return orjson.dumps(_wire_dict(obj, scheme))


def encode_yaml(obj: APIObject, scheme: Scheme) -> str:
    """Encode to YAML text in the field order of :func:`encode`, filling the kind the same way.

    Strings that a YAML 1.1 reader would take for another type (``"on"``, timestamps,
    ``"1"``) are quoted, so the text decodes back to the same object anywhere.
    """
    text: str = yaml.dump(
        _wire_dict(obj, scheme),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )
    return text


def _wire_dict(obj: APIObject, scheme: Scheme) -> dict[str, Any]:
    data = obj.model_dump()
    if not (obj.api_version and obj.kind):
        gvk = scheme.object_kind(obj)
        data["apiVersion"] = obj.api_version or gvk.api_version
        data["kind"] = obj.kind or gvk.kind
    return data


# JSON -------------------------------------------------------------------------------------


def _is_json(data: bytes | str) -> bool:
    head = data[:64].lstrip() or data.lstrip()
    return head[:1] in (b"{", "{")


def _decode_json(data: bytes | str, scheme: Scheme) -> APIObject:
    with no_gc(len(data)):
        document = _loads(data)
        cls = scheme.lookup(_document_kind(document))
        if cls is not None:
            return _validate(cls, document)
        return _unstructured(document)


@lru_cache(maxsize=1024)
def _gvk(api_version: str, kind: str) -> GroupVersionKind | None:
    if not kind:
        return None
    try:
        return GroupVersion.parse(api_version).with_kind(kind)
    except ValueError:
        return None


def _loads(data: bytes | str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise DecodeError(f"malformed JSON: {e.msg}", line=e.lineno, column=e.colno) from None


# YAML -------------------------------------------------------------------------------------


try:
    from yaml import CSafeDumper as _BaseDumper
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment,unused-ignore]
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment,unused-ignore]


class _Loader(_BaseLoader):  # type: ignore[misc,unused-ignore]
    """Safe YAML loading with Kubernetes' JSON-compatible reading (see the module doc)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # Keys are converted one by one: as Python values, ``on`` (True) and ``1`` collide.
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str | int | float | bool | None):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found a {type(key).__name__} as a key",
                    key_node.start_mark,
                )
            mapping[_json_key(key)] = self.construct_object(value_node, deep=deep)
        return mapping


# Timestamps stay strings, as in JSON: drop the resolver (on this class only) that reads them.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


class _Dumper(_BaseDumper):  # type: ignore[misc,unused-ignore]
    """Safe YAML dumping; a separate class so registrations never leak into PyYAML's own."""


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return orjson.dumps(key).decode()
    return str(key)


@dataclass(frozen=True, slots=True)
class _YamlDocument:
    index: int
    node: yaml.Node
    content: Any


def _yaml_documents(data: bytes | str) -> Iterator[_YamlDocument]:
    """Yield each non-empty document with its index in the stream and its node tree."""
    loader = _Loader(data)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                break
            content = loader.construct_document(node)
            if content is not None:
                yield _YamlDocument(index, node, content)
            index += 1
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        reason = " ".join(part for part in (e.context, e.problem) if part) or "malformed YAML"
        raise DecodeError(
            f"malformed YAML: {reason}",
            line=None if mark is None else mark.line + 1,
            column=None if mark is None else mark.column + 1,
            document=index,
        ) from None
    except yaml.YAMLError as e:
        raise DecodeError(f"malformed YAML: {e}", document=index) from None
    finally:
        loader.dispose()


def _decode_document(document: _YamlDocument, scheme: Scheme) -> APIObject:
    content = document.content
    try:
        cls = scheme.lookup(_document_kind(content))
        return _unstructured(content) if cls is None else _validate(cls, content)
    except DecodeError as e:
        line, column = _position(document.node, e.loc)
        raise e.in_document(document.index, line, column) from None


def _position(node: yaml.Node, loc: tuple[str | int, ...]) -> tuple[int, int | None]:
    """1-based line and column of the value at ``loc``, or of the document when it has none.

    Best effort: the deepest node of ``loc`` that exists in the tree is reported.
    """
    if not loc:
        return node.start_mark.line + 1, None
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next(
                (v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part),
                None,
            )
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            child = node.value[part] if 0 <= part < len(node.value) else None
        if child is None:
            break
        node = child
    return node.start_mark.line + 1, node.start_mark.column + 1


# Shared -----------------------------------------------------------------------------------


def _document_kind(document: Any) -> GroupVersionKind:
    if not isinstance(document, dict):
        raise DecodeError(f"expected a mapping at the top level, found {_json_type(document)}")
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if isinstance(api_version, str) and isinstance(kind, str) and api_version and kind:
        gvk = _gvk(api_version, kind)
        if gvk is None:
            raise DecodeError(f"malformed apiVersion {api_version!r}", loc=("apiVersion",))
        return gvk
    missing = [
        name
        for name, value in (("apiVersion", api_version), ("kind", kind))
        if not isinstance(value, str) or not value
    ]
    raise DecodeError(f"missing {' and '.join(missing)} (every object must say its type)")


def _validate(cls: type[T], document: dict[str, Any]) -> T:
    try:
        return cls.model_from_wire(document)
    except ValidationError as e:
        raise _type_error(cls, e) from None


def _unstructured(document: dict[str, Any]) -> APIObject:
    if not isinstance(document.get("items"), list):
        return _validate(Unstructured, document)
    things = _validate(UnstructuredList, document)
    # Lists of built-in kinds leave the items' type out; name it, as apimachinery does.
    item_kind = things.kind.removesuffix("List")
    for item in things.items:
        if not item.kind and not item.api_version:
            item.api_version, item.kind = things.api_version, item_kind
    return things


def _type_error(cls: type[APIObject], error: ValidationError) -> DecodeError:
    first = error.errors()[0]
    more = error.error_count() - 1
    suffix = f" (and {more} more error{'s' if more > 1 else ''})" if more else ""
    return DecodeError(f"decoding {cls.__name__}: {first['msg']}{suffix}", loc=first["loc"])


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__
