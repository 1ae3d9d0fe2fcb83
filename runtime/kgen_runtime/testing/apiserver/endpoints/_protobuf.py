"""``application/vnd.kubernetes.protobuf`` bodies of built-in kinds, read and written as
kube-apiserver does.

client-go's typed clients (``kubectl create``, ``run``, ``expose``) send built-in objects in
protobuf and ask for protobuf back (``Accept: application/vnd.kubernetes.protobuf,
application/json``). A body is the 4-byte magic ``k8s\\x00`` and a ``runtime.Unknown``
{typeMeta {apiVersion, kind}, raw, contentEncoding, contentType} whose ``raw`` is the kind's
``generated.proto`` message (apimachinery ``pkg/runtime/serializer/protobuf``).

The messages are walked with each kind's schema: field numbers and Go pointer-ness from
:mod:`._protobuf_fields`, field types from the bundled OpenAPI document
(:mod:`kgen_runtime.testing.apiserver.openapi._openapi`).
A decoded message becomes the JSON-shaped dict the server stores, as Go's JSON encoder would
print the struct the real server decoded (zero scalars of ``omitempty`` value fields left
out, a zero ``metav1.Time`` left out); an encoded one is byte for byte what Go's generated
marshallers write: fields in number order, value fields written even when zero (an empty
string, an empty message), map entries sorted by key. Special types keep their own messages:
``metav1.Time`` {seconds, nanos} (seconds only on decode, as ``Time.Unmarshal``),
``MicroTime`` (microseconds kept), ``resource.Quantity`` {string}, ``intstr.IntOrString``
{type, intVal, strVal}, and ``RawExtension``/``FieldsV1``/``JSON`` {raw JSON bytes}.

Kinds whose schema is not fully numbered in :mod:`._protobuf_fields` are answered in JSON
(which every client-go Accept header allows) and their protobuf bodies get a 415 naming the
kind. Watches stay JSON.
"""

from __future__ import annotations

import base64
import calendar
import functools
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from kgen_runtime.rest import Request
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.endpoints._protobuf_fields import FIELDS
from kgen_runtime.testing.apiserver.endpoints._protobuf_wire import (
    BYTES,
    ProtobufError,
    Writer,
    fields,
    read_varint,
)
from kgen_runtime.testing.apiserver.endpoints._responses import BufferedResponse, CoreResponse
from kgen_runtime.testing.apiserver.openapi._openapi import (
    builtin_document,
    builtin_kinds,
    builtin_paths,
    group_version_path,
)

__all__ = ["MEDIA_TYPE", "NoSchema", "decode_body", "encode_object", "has_schema",
           "negotiated", "prefers_protobuf"]

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
#: apimachinery pkg/runtime/serializer/protobuf: protoEncodingPrefix.
_MAGIC = b"k8s\x00"
_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
#: Types with their own proto messages and JSON forms.
_SPECIAL = {
    _META + "Time": "time",
    _META + "MicroTime": "microtime",
    _META + "FieldsV1": "raw",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "raw",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": "raw",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intstr",
}
#: The metadata-only kinds, which no OpenAPI document describes (apimachinery
#: pkg/apis/meta/v1/types.go): an object's ObjectMeta, a list's ListMeta and items. Their
#: refs resolve in the core document, which has ObjectMeta and ListMeta.
_PARTIAL: dict[str, dict[str, Any]] = {
    _META + "PartialObjectMetadata": {
        "x-kubernetes-group-version-kind": [
            {"group": "meta.k8s.io", "version": "v1", "kind": "PartialObjectMetadata"}],
        "properties": {"metadata": {"$ref": _REF + _META + "ObjectMeta"}}},
    _META + "PartialObjectMetadataList": {
        "x-kubernetes-group-version-kind": [
            {"group": "meta.k8s.io", "version": "v1", "kind": "PartialObjectMetadataList"}],
        "properties": {"metadata": {"$ref": _REF + _META + "ListMeta"},
                       "items": {"type": "array",
                                 "items": {"$ref": _REF + _META + "PartialObjectMetadata"}}}},
}
_SCALARS = {"string", "bytes", "int32", "int64", "bool", "double"}
_VARINTS = {"int32", "int64", "bool"}

Obj = dict[str, Any]


class NoSchema(LookupError):
    """The kind, or a message it contains, has no numbered schema here."""


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    number: int
    flag: str  # "" value with omitempty, "*" pointer, "!" value without omitempty
    label: str  # "" singular, "rep" repeated, "map" map<string, kind>
    kind: str  # a scalar, "message", "inline", "strings" (map value []string), a _SPECIAL kind
    ref: str  # the schema of a "message", the FIELDS table of an "inline" struct


@dataclass(frozen=True, slots=True)
class _Message:
    fields: tuple[_Field, ...]  # in number order
    by_number: Mapping[int, _Field]
    path: str  # the OpenAPI document the schemas come from
    schema: str  # the schema whose properties these are
    unnumbered: frozenset[str]  # fields whose number is not known here (never set by us)


# -- schemas --------------------------------------------------------------------------------


def _schema_of(api_version: str, kind: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    path = group_version_path(group, version)
    name = builtin_kinds(path).get(kind)
    found = (path, name) if name is not None else _foreign_kinds().get((api_version, kind))
    if api_version == "meta.k8s.io/v1" and _META + kind in _PARTIAL:
        found = ("api/v1", _META + kind)
    if found is None or found[1] not in FIELDS:
        raise NoSchema(f"{kind} {api_version}")
    return found


@functools.cache
def _foreign_kinds() -> dict[tuple[str, str], tuple[str, str]]:
    """Kinds that only another group's document has: a subresource's body (``Eviction`` of
    policy/v1 under pods, ``Scale`` of autoscaling/v1 under apps, ``TokenRequest`` of
    authentication/v1 under serviceaccounts) -> that document's path and schema name."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for path in builtin_paths():
        schemas = ((builtin_document(path) or {}).get("components") or {}).get("schemas") or {}
        for name, schema in sorted(schemas.items()):
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                group, version = gvk.get("group", ""), gvk.get("version", "")
                api_version = f"{group}/{version}" if group else version
                found.setdefault((api_version, gvk.get("kind", "")), (path, name))
    return found


@functools.cache
def _message(path: str, name: str, table: str = "") -> _Message:
    """The message of schema ``name``; with ``table``, the Go struct of that name inlined in
    it (``Volume``'s ``VolumeSource``): the schema's properties that ``table`` numbers."""
    numbers = FIELDS.get(table or name)
    document = builtin_document(path) or {}
    schema = ((document.get("components") or {}).get("schemas") or {}).get(name) or (
        _PARTIAL.get(name))
    if numbers is None or schema is None:
        raise NoSchema(table or name)
    prefix = (table or name).rpartition(".")[0] + "."
    inlined = {key[1:]: spec for key, spec in numbers.items() if key.startswith("@")}
    covered = {key for sub in inlined for key in _inlined_fields(prefix, sub)}
    top_level = bool(schema.get("x-kubernetes-group-version-kind"))
    found, unnumbered = [], set()
    for key, prop in (schema.get("properties") or {}).items():
        if top_level and key in ("apiVersion", "kind"):
            continue  # TypeMeta travels in the envelope
        if key not in numbers:
            if key in covered or table:
                continue  # an inlined struct's field, or (for that struct) the outer one's
            raise NoSchema(f"{name}.{key}")
        number, flag = numbers[key]
        if not number:
            unnumbered.add(key)
            continue
        label, kind, ref = _kind(prop)
        found.append(_Field(key, number, flag, label, kind, ref))
    for sub, (number, flag) in inlined.items():
        found.append(_Field("@" + sub, number, flag, "", "inline", prefix + sub))
    ordered = tuple(sorted(found, key=lambda f: f.number))
    return _Message(ordered, {f.number: f for f in ordered}, path, name, frozenset(unnumbered))


def _inlined_fields(prefix: str, table: str) -> set[str]:
    """The JSON fields an inlined struct brings, its own inlined structs' included
    (``NamedRuleWithOperations`` inlines ``RuleWithOperations``, which inlines ``Rule``)."""
    fields_of = FIELDS.get(prefix + table, {})
    nested = (_inlined_fields(prefix, key[1:]) for key in fields_of if key.startswith("@"))
    return set(fields_of).union(*nested)


def _kind(prop: Mapping[str, Any]) -> tuple[str, str, str]:
    """(label, kind, ref) of an OpenAPI property."""
    refs = [prop["$ref"]] if "$ref" in prop else [s["$ref"] for s in prop.get("allOf") or ()
                                                 if "$ref" in s]
    if refs:
        ref = refs[0].removeprefix(_REF)
        return "", _SPECIAL.get(ref, "message"), ref
    kind, fmt = prop.get("type"), prop.get("format")
    if kind == "array":
        _, item, ref = _kind(prop["items"])
        return "rep", item, ref
    if kind == "object" and isinstance(prop.get("additionalProperties"), Mapping):
        value = prop["additionalProperties"]
        if value.get("type") == "array":  # map[string][]string: a message {repeated items = 1}
            return "map", "strings", ""
        _, item, ref = _kind(value)
        return "map", item, ref
    if fmt == "int-or-string":
        return "", "intstr", ""
    simple = {"string": "bytes" if fmt == "byte" else "string",
              "integer": "int32" if fmt == "int32" else "int64",
              "number": "double", "boolean": "bool"}.get(kind or "")
    if simple is None:
        raise NoSchema(f"property of type {kind!r}")
    return "", simple, ""


def has_schema(api_version: str, kind: str) -> bool:
    """Whether every message a kind can contain is numbered here (fields marked ``?``
    aside), so that any object of it that leaves those unset is encoded."""
    try:
        pending, seen = [_message(*_schema_of(api_version, kind))], set()
        while pending:
            message = pending.pop()
            for field in message.fields:
                if field.kind in ("message", "inline") and (field.ref, field.kind) not in seen:
                    seen.add((field.ref, field.kind))
                    pending.append(_sub(message, field))
    except NoSchema:
        return False
    return True


def _sub(message: _Message, field: _Field) -> _Message:
    if field.kind == "inline":
        return _message(message.path, message.schema, field.ref)
    return _message(message.path, field.ref)


# -- decoding -------------------------------------------------------------------------------


def decode_body(body: bytes) -> Obj:
    """The object of a protobuf request body, JSON-shaped, ``apiVersion`` and ``kind`` first."""
    if not body.startswith(_MAGIC):
        # pkg/runtime/serializer/protobuf Decode; the handler answers it as a BadRequest
        raise StatusError.bad_request(
            "provided data does not appear to be a protobuf message, expected prefix "
            "[107 56 115 0]")
    try:
        api_version, kind, raw = _unwrap(body[len(_MAGIC):])
        try:
            path, name = _schema_of(api_version, kind)
            obj = _decode_message(raw, _message(path, name))
        except NoSchema:
            raise StatusError(
                415, "UnsupportedMediaType",
                f"the test server cannot decode {kind} ({api_version}) from protobuf: it has "
                f"no protobuf schema for it; send application/json") from None
    except ProtobufError as error:
        raise StatusError.bad_request(f"unable to decode protobuf body: {error}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}


def _unwrap(envelope: bytes) -> tuple[str, str, bytes]:
    api_version = kind = ""
    raw = b""
    for number, wire, value in fields(envelope):
        if number == 1 and wire == BYTES:
            for sub, sub_wire, text in fields(_bytes(value)):
                if sub_wire == BYTES and sub in (1, 2):
                    decoded = _bytes(text).decode()
                    api_version, kind = (decoded, kind) if sub == 1 else (api_version, decoded)
        elif number == 2 and wire == BYTES:
            raw = _bytes(value)
    return api_version, kind, raw


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError("a length-delimited field was expected")
    return value


def _decode_message(data: bytes, message: _Message) -> Obj:
    out: Obj = {}
    for number, wire, value in fields(data):
        field = message.by_number.get(number)
        if field is None:
            continue  # unknown fields are dropped, as Go's generated Unmarshal does
        if field.label == "rep":
            items = out.setdefault(field.name, [])
            if wire == BYTES and field.kind in _VARINTS:  # packed
                items += [_scalar(field.kind, v) for v in _packed_varints(_bytes(value))]
            elif wire == BYTES and field.kind == "double":
                raw = _bytes(value)
                items += [v for (v,) in struct.iter_unpack("<d", raw)]
            else:
                items.append(_decode_value(message, field, value))
        elif field.label == "map":
            key, item = _decode_entry(message, field, _bytes(value))
            out.setdefault(field.name, {})[key] = item
        elif field.kind == "inline":  # a Go struct embedded with json:",inline"
            out.update(_decode_message(_bytes(value), _sub(message, field)))
        else:
            out[field.name] = _decode_value(message, field, value)
    for field in message.fields:
        if field.label or field.name not in out:
            continue
        value = out[field.name]
        if value is None or (field.flag == "" and field.kind in _SCALARS
                             and value in ("", 0, False)):
            del out[field.name]  # JSON's omitempty, or a null Time / RawExtension
    return out


def _packed_varints(data: bytes) -> list[int]:
    values, offset = [], 0
    while offset < len(data):
        value, offset = read_varint(data, offset)
        values.append(value)
    return values


def _decode_entry(message: _Message, field: _Field, data: bytes) -> tuple[str, Any]:
    key, value = "", None
    for number, _, item in fields(data):
        if number == 1:
            key = _bytes(item).decode("utf-8", "replace")
        elif number == 2:
            value = _decode_value(message, field, item)
    return key, _zero(field) if value is None else value


def _decode_value(message: _Message, field: _Field, value: int | bytes) -> Any:
    kind = field.kind
    if kind in _SCALARS:
        return _scalar(kind, value)
    data = _bytes(value)
    if kind == "message":
        return _decode_message(data, _sub(message, field))
    parts = {number: item for number, _, item in fields(data)}
    if kind in ("time", "microtime"):
        seconds = _signed(_int(parts.get(1, 0)), 64)
        nanos = _signed(_int(parts.get(2, 0)), 32) if kind == "microtime" else 0
        return _format_time(seconds, nanos, kind) if (seconds or nanos) else None
    if kind == "quantity":
        return _bytes(parts.get(1, b"")).decode()
    if kind == "intstr":
        if _int(parts.get(1, 0)) == 0:
            return _signed(_int(parts.get(2, 0)), 32)
        return _bytes(parts.get(3, b"")).decode("utf-8", "replace")
    if kind == "raw":
        raw = _bytes(parts.get(1, b""))
        return orjson.loads(raw) if raw else None
    if kind == "strings":
        return [_bytes(item).decode("utf-8", "replace")
                for number, _, item in fields(data) if number == 1]
    raise NoSchema(kind)


def _int(value: int | bytes) -> int:
    if isinstance(value, bytes):
        raise ProtobufError("a varint field was expected")
    return value


def _scalar(kind: str, value: int | bytes) -> Any:
    if kind == "string":
        return _bytes(value).decode("utf-8", "replace")
    if kind == "bytes":
        return base64.b64encode(_bytes(value)).decode()
    if kind == "double":
        return struct.unpack("<d", struct.pack("<Q", _int(value)))[0]
    number = _int(value)
    if kind == "bool":
        return number != 0
    return _signed(number, 32 if kind == "int32" else 64)


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _format_time(seconds: int, nanos: int, kind: str) -> str:
    moment = datetime.fromtimestamp(seconds, UTC)
    if kind == "microtime":  # metav1.RFC3339Micro
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# -- encoding -------------------------------------------------------------------------------


def encode_object(obj: Obj) -> bytes:
    """The protobuf body of ``obj`` (with its ``apiVersion`` and ``kind``); :class:`NoSchema`
    if the kind, or one of the fields it uses, is not numbered here."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    path, name = _schema_of(api_version, kind)
    raw = _encode_message(obj, _message(path, name))
    type_meta = Writer()
    type_meta.delimited(1, api_version.encode())
    type_meta.delimited(2, kind.encode())
    envelope = Writer()
    envelope.delimited(1, type_meta.getvalue())
    envelope.delimited(2, raw)
    envelope.delimited(3, b"")  # contentEncoding
    envelope.delimited(4, b"")  # contentType
    return _MAGIC + envelope.getvalue()


def _encode_message(obj: Mapping[str, Any], message: _Message) -> bytes:
    if any(obj.get(key) is not None for key in message.unnumbered):
        raise NoSchema(f"a field of unknown number among {sorted(message.unnumbered)}")
    writer = Writer()
    for field in message.fields:
        value = obj.get(field.name)
        if field.label == "rep":
            for item in value or ():
                _write(writer, message, field, item)
        elif field.label == "map":
            entries = value or {}
            for key in sorted(entries):
                entry = Writer()
                entry.delimited(1, key.encode())
                _write(entry, message, field, entries[key], 2)
                writer.delimited(field.number, entry.getvalue())
        elif field.kind == "inline":
            writer.delimited(field.number, _encode_message(obj, _sub(message, field)))
        elif value is not None:
            _write(writer, message, field, value)
        elif field.flag != "*" and field.kind != "bytes":  # a nil []byte is not written
            _write(writer, message, field, _zero(field))
    return writer.getvalue()


def _zero(field: _Field) -> Any:
    """The Go zero value of a field, JSON-shaped (a zero Quantity prints as ``"0"``)."""
    return {"string": "", "bytes": "", "int32": 0, "int64": 0, "bool": False, "double": 0.0,
            "message": {}, "time": "", "microtime": "", "quantity": "0", "intstr": 0,
            "raw": None, "strings": []}[field.kind]


def _write(writer: Writer, message: _Message, field: _Field, value: Any,
           number: int = 0) -> None:
    number = number or field.number
    kind = field.kind
    if kind == "string":
        writer.delimited(number, str(value).encode())
    elif kind == "bytes":
        writer.delimited(number, base64.b64decode(value))
    elif kind in ("int32", "int64"):
        writer.varint(number, int(value))
    elif kind == "bool":
        writer.varint(number, 1 if value else 0)
    elif kind == "double":
        writer.double(number, float(value))
    elif kind == "message":
        writer.delimited(number, _encode_message(value, _sub(message, field)))
    else:
        writer.delimited(number, _special(kind, value))


def _special(kind: str, value: Any) -> bytes:
    inner = Writer()
    if kind in ("time", "microtime"):
        if value:  # a zero Time is an empty message (metav1.Time.Size)
            seconds, nanos = _parse_time(str(value))
            inner.varint(1, seconds)
            inner.varint(2, nanos)
    elif kind == "quantity":
        inner.delimited(1, str(value).encode())
    elif kind == "intstr":
        is_int = isinstance(value, int) and not isinstance(value, bool)
        inner.varint(1, 0 if is_int else 1)
        inner.varint(2, int(value) if is_int else 0)
        inner.delimited(3, b"" if is_int else str(value).encode())
    elif kind == "raw":
        if value is not None:
            inner.delimited(1, orjson.dumps(value))
    elif kind == "strings":
        for item in value:
            inner.delimited(1, str(item).encode())
    else:
        raise NoSchema(kind)
    return inner.getvalue()


def _parse_time(text: str) -> tuple[int, int]:
    """Seconds and nanoseconds of an RFC 3339 time (what ``Time.UnmarshalJSON`` reads)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    seconds = calendar.timegm(moment.utctimetuple())
    return seconds, moment.microsecond * 1000


# -- negotiation ----------------------------------------------------------------------------


def _builtin_path(path: str) -> bool:
    """Whether ``path`` is under ``/api`` or a built-in ``/apis/<group>/<version>``."""
    parts = [part for part in path.split("?", 1)[0].split("/") if part]
    if parts[:1] == ["api"]:
        return True
    return (len(parts) >= 3 and parts[0] == "apis"
            and group_version_path(parts[1], parts[2]) in builtin_paths())


def prefers_protobuf(accept: str | None, transformed: str = "") -> bool:
    """Whether the first media range of ``accept`` the server can produce is plain protobuf
    (or, for an answer already ``transformed`` to that meta.k8s.io/v1 kind, protobuf ``as``
    it: ``as=PartialObjectMetadataList;g=meta.k8s.io;v=v1``).

    Ranges rank as apimachinery's vendored goautoneg sorts them (``accept_slice.Less``):
    higher ``q`` first, then a concrete type before ``*``, a concrete subtype before ``*``,
    then the client's order."""
    ranges = []
    for position, media_range in enumerate((accept or "").split(",")):
        media, *params = (part.strip() for part in media_range.split(";"))
        options = dict(param.partition("=")[::2] for param in params)
        try:
            quality = float(options.pop("q", "1"))
        except ValueError:
            quality = 1.0
        kind, _, subtype = media.lower().partition("/")
        ranges.append(((-quality, kind == "*", subtype == "*", position), media.lower(), options))
    for _, media, options in sorted(ranges, key=lambda r: r[0]):
        if media == MEDIA_TYPE and (not options or (transformed and options == {
                "as": transformed, "g": "meta.k8s.io", "v": "v1"})):
            return True
        if media in ("application/json", "application/yaml", "application/*", "*/*"):
            return False
    return False


def negotiated(request: Request, response: CoreResponse) -> CoreResponse:
    """``response`` in protobuf when the client prefers it, the path is a built-in group's
    and the body is an object (or list, or Status) that has a protobuf schema here;
    otherwise unchanged. Custom resources' endpoints answer JSON, errors included: the
    apiextensions-apiserver serves them without a protobuf serializer."""
    accept = request.header("Accept")
    if (not isinstance(response, BufferedResponse)
            or response.headers.get("Content-Type") != "application/json"
            or MEDIA_TYPE not in (accept or "").lower()
            or not _builtin_path(request.path)):
        return response
    body = orjson.loads(response.read())
    if not isinstance(body, dict):
        return response
    transformed = str(body.get("kind") or "") if (
        body.get("apiVersion") == "meta.k8s.io/v1"
        and _META + str(body.get("kind")) in _PARTIAL) else ""
    if not prefers_protobuf(accept, transformed):
        return response
    try:
        payload = encode_object(body)
    except (NoSchema, ValueError, TypeError):  # no schema, or a value Go could not hold
        return response
    return BufferedResponse(response.status, payload,
                            {**response.headers, "Content-Type": MEDIA_TYPE})
