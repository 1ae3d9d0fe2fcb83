"""The Kubernetes CEL libraries that CRD validation rules may call, as Python functions.

kube-apiserver's CEL environment adds to the CEL standard library: cel-go's string, math,
set, list and encoder extensions (``lowerAscii``, ``split``, ``substring``, ``format`` …, most
taken from ``cel.stdlib``) and Kubernetes' own libraries (``k8s.io/apiserver/pkg/cel/library``):
lists (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``), regex
(``find``, ``findAll``), URLs (``url``, ``isURL``, ``getScheme`` …), IP addresses and CIDRs
(``ip``, ``cidr``, ``family``, ``containsCIDR`` …), quantities (``quantity``,
``isGreaterThan`` …), semantic versions (``semver``, ``major`` …) and formats
(``format.dns1123Label().validate(s)``).

CEL calls ``x.f(a)`` as ``f(x, a)``, so each function takes its receiver first. Values of the
library's own types (URL, IP, CIDR, quantity, format) travel through CEL as maps tagged with
:data:`TYPE_KEY`, since the CEL package converts results to plain CEL values.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from cel import OptionalValue
from cel import stdlib as cel_stdlib

from kgen_runtime import _names
from kgen_runtime.cel._quantity import parse_quantity

__all__ = ["FUNCTIONS", "NATIVE_FUNCTIONS", "TYPE_KEY", "VARIABLES"]

#: The key that marks a map as a value of one of the library's types.
TYPE_KEY = "__kgen_cel_type__"

Value = dict[str, Any]


def _typed(kind: str, value: Any) -> Value:
    return {TYPE_KEY: kind, "value": value}


def _unwrap(kind: str, value: Any) -> Any:
    if not (isinstance(value, dict) and value.get(TYPE_KEY) == kind):
        raise TypeError("no such overload")
    return value["value"]


# -- lists --------------------------------------------------------------------------------


def _is_sorted(items: list[Any]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(items))


def _index_of(container: Any, item: Any, *start: int) -> int:
    if isinstance(container, str):
        offset = start[0] if start else 0
        if offset < 0 or offset > len(container):
            raise IndexError(f"index out of range: {offset}")
        return container.find(item, offset)
    return next((i for i, value in enumerate(container) if value == item), -1)


def _last_index_of(container: Any, item: Any, *end: int) -> int:
    if isinstance(container, str):
        stop = end[0] if end else len(container)
        return container.rfind(item, 0, stop + len(item))
    return next((i for i in range(len(container) - 1, -1, -1) if container[i] == item), -1)


# -- strings: format (cel-go's ext.Strings) -------------------------------------------------

_VERB = re.compile(r"%(\.\d+)?([sdfeExXobc%])")


def _format(template: str, args: list[Any]) -> str:
    values = iter(args)

    def render(match: re.Match[str]) -> str:
        precision, verb = match.groups()
        if verb == "%":
            return "%"
        value = next(values)
        if verb == "s":
            return _as_string(value)
        if verb in "fFeE":
            return f"{float(value):{precision or '.6'}{verb}}"
        if verb == "d":
            return str(int(value))
        spec = {"x": "x", "X": "X", "o": "o", "b": "b"}.get(verb)
        if spec is not None:
            if isinstance(value, str | bytes):
                data = value.encode() if isinstance(value, str) else value
                return data.hex() if verb == "x" else data.hex().upper()
            return format(int(value), spec)
        return chr(int(value))

    return _VERB.sub(render, template)


def _as_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(_as_string(v) for v in value) + "]"
    return str(value)


# -- regex ----------------------------------------------------------------------------------


def _find(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, *limit: int) -> list[str]:
    found = [m.group(0) for m in re.finditer(pattern, text)]
    return found[: limit[0]] if limit and limit[0] >= 0 else found


# -- URLs ----------------------------------------------------------------------------------


def _url(text: str) -> Value:
    if not _is_url(text):
        raise ValueError(f"URL parse error during conversion from string: {text}")
    return _typed("url", text)


def _is_url(text: str) -> bool:
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return bool(parts.scheme or text.startswith("/"))


def _url_part(part: str) -> Callable[[Value], Any]:
    def get(url: Value) -> Any:
        parts = urlsplit(_unwrap("url", url))
        if part == "host":
            return parts.netloc.rpartition("@")[2]
        if part == "hostname":
            return parts.hostname or ""
        if part == "port":
            return str(parts.port or "") if parts.port else ""
        if part == "path":
            return parts.path
        if part == "query":
            query: dict[str, list[str]] = {}
            for pair in filter(None, parts.query.split("&")):
                key, _, value = pair.partition("=")
                query.setdefault(key, []).append(value)
            return query
        return parts.scheme

    return get


# -- IP addresses and CIDRs ----------------------------------------------------------------


def _ip(text: str) -> Value:
    if "%" in text or not _is_ip(text):
        raise ValueError(f"IP Address {text!r} parse error during conversion from string")
    return _typed("ip", text)


def _is_ip(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return not (isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped)


def _address(value: Value) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(_unwrap("ip", value))


def _cidr(text: str) -> Value:
    if not _is_cidr(text):
        raise ValueError(f"network address parse error during conversion from string: {text}")
    return _typed("cidr", text)


def _is_cidr(text: str) -> bool:
    try:
        ipaddress.ip_interface(text)
    except ValueError:
        return False
    return "/" in text


def _network(value: Value) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(_unwrap("cidr", value))


def _ip_of(value: Value) -> Value:
    """``cidr.ip()``: the address part of a CIDR (``ip()`` of a string is :func:`_ip`)."""
    if isinstance(value, str):
        return _ip(value)
    return _typed("ip", str(_network(value).ip))


def _contains_ip(cidr: Value, other: Any) -> bool:
    address = ipaddress.ip_address(other if isinstance(other, str) else _unwrap("ip", other))
    return address in _network(cidr).network


def _contains_cidr(cidr: Value, other: Any) -> bool:
    inner = ipaddress.ip_interface(other if isinstance(other, str) else _unwrap("cidr", other))
    outer = _network(cidr).network
    return inner.version == outer.version and inner.network.subnet_of(outer)  # type: ignore[arg-type]


def _family(value: Value) -> int:
    return _address(value).version


def _address_test(test: str) -> Callable[[Value], bool]:
    def check(value: Value) -> bool:
        address = _address(value)
        if test == "global":
            return not (address.is_unspecified or address.is_loopback or address.is_link_local
                        or address.is_multicast or (address.version == 4
                                                    and int(address) == 0xFFFFFFFF))
        if test == "linkLocalMulticast":
            network = "224.0.0.0/24" if address.version == 4 else "ff02::/16"
            return address in ipaddress.ip_network(network)
        attribute = {"unspecified": "is_unspecified", "loopback": "is_loopback",
                     "linkLocalUnicast": "is_link_local"}[test]
        return bool(getattr(address, attribute))

    return check


# -- quantities ----------------------------------------------------------------------------


def _quantity(text: str) -> Value:
    parse_quantity(text)
    return _typed("quantity", text)


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _amount(value: Value) -> Decimal:
    return parse_quantity(_unwrap("quantity", value))


def _operand(value: Any) -> Decimal:
    return Decimal(value) if isinstance(value, int) else _amount(value)


def _compare(a: Value, b: Value) -> int:
    """``compareTo`` of two quantities or two semantic versions."""
    if isinstance(a, dict) and a.get(TYPE_KEY) == "semver":
        left_version, right_version = _version(a), _version(b)
        return (left_version > right_version) - (left_version < right_version)
    left, right = _amount(a), _amount(b)
    return (left > right) - (left < right)


def _as_integer(value: Value) -> int:
    amount = _amount(value)
    if amount != amount.to_integral_value():
        raise ValueError("cannot convert value to integer")
    return int(amount)


# -- semantic versions ---------------------------------------------------------------------

_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?")


def _semver(text: str) -> Value:
    if not _SEMVER.fullmatch(text):
        raise ValueError(f"could not parse {text!r} as semver")
    return _typed("semver", text)


def _version(value: Value) -> tuple[int, int, int, tuple[tuple[int, int | str], ...]]:
    match = _SEMVER.fullmatch(_unwrap("semver", value))
    assert match is not None  # _semver checked it
    major, minor, patch, pre = match.groups()
    # a release sorts after its pre-releases; numeric identifiers before alphanumeric ones
    tail = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")) if pre else (
        (2, 0),)
    return int(major), int(minor), int(patch), tail


# -- formats (k8s.io/apiserver/pkg/cel/library/format.go) ----------------------------------

_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _names.dns1123_label_errors,
    "dns1123Subdomain": _names.dns1123_subdomain_errors,
    "dns1035Label": _names.dns1035_label_errors,
    "qualifiedName": _names.qualified_name_errors,
    "labelValue": _names.label_value_errors,
    "uri": lambda text: [] if _is_url(text) else ["invalid URI"],
    "uuid": lambda text: [] if re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", text) else [
        "does not match the UUID format"],
}


def _format_named(name: str) -> Callable[[Any], Value]:
    return lambda _namespace: _typed("format", name)


def _named_format(_namespace: Any, name: str) -> OptionalValue:
    if name not in _FORMATS:
        return OptionalValue.none()
    return OptionalValue.of(_typed("format", name))


def _validate(fmt: Value, text: str) -> OptionalValue:
    errors = _FORMATS[_unwrap("format", fmt)](text)
    return OptionalValue.of(errors) if errors else OptionalValue.none()


def _stdlib(*groups: str, skip: tuple[str, ...] = ()) -> dict[str, Callable[..., Any]]:
    return {name: function for group in groups for name, function in
            cel_stdlib.EXTENSIONS[group].items() if name not in skip}


#: Every function the rules may call beyond the CEL package's native ones, by name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    **_stdlib("core", "strings", "math", "sets", "encoders"),
    **_stdlib("lists", skip=("contains",)),
    "isSorted": _is_sorted,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "format": _format,
    "find": _find,
    "findAll": _find_all,
    "url": _url,
    "isURL": _is_url,
    "getScheme": _url_part("scheme"),
    "getHost": _url_part("host"),
    "getHostname": _url_part("hostname"),
    "getPort": _url_part("port"),
    "getEscapedPath": _url_part("path"),
    "getQuery": _url_part("query"),
    "ip": _ip_of,
    "isIP": _is_ip,
    "family": _family,
    "isUnspecified": _address_test("unspecified"),
    "isLoopback": _address_test("loopback"),
    "isLinkLocalMulticast": _address_test("linkLocalMulticast"),
    "isLinkLocalUnicast": _address_test("linkLocalUnicast"),
    "isGlobalUnicast": _address_test("global"),
    "cidr": _cidr,
    "isCIDR": _is_cidr,
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "prefixLength": lambda value: _network(value).network.prefixlen,
    "masked": lambda value: _typed("cidr", str(_network(value).network)),
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "sign": lambda value: _compare(value, _typed("quantity", "0")),
    "isInteger": lambda value: _amount(value) == _amount(value).to_integral_value(),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda value: float(_amount(value)),
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
    "add": lambda a, b: _typed("quantity", str(_amount(a) + _operand(b))),
    "sub": lambda a, b: _typed("quantity", str(_amount(a) - _operand(b))),
    "semver": _semver,
    "isSemver": lambda text, *_normalize: bool(_SEMVER.fullmatch(text)),
    "major": lambda version: _version(version)[0],
    "minor": lambda version: _version(version)[1],
    "patch": lambda version: _version(version)[2],
    "isCanonical": lambda _ip, text: _is_ip(text) and str(ipaddress.ip_address(text)) == text,
    **{name: _format_named(name) for name in _FORMATS},
    "named": _named_format,
    "validate": _validate,
}

#: Variables the library needs in every activation: the namespaces of
#: ``format.dns1123Label()`` and ``ip.isCanonical(s)``.
VARIABLES: dict[str, Any] = {"format": {TYPE_KEY: "formats"}, "ip": {TYPE_KEY: "ips"}}

#: The functions the CEL package implements itself, with the operators' internal names
#: (``_+_``, ``@in``, ``!_``) recognised by their punctuation.
NATIVE_FUNCTIONS = frozenset({
    "size", "int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration",
    "matches", "contains", "startsWith", "endsWith", "dyn", "type", "max", "min",
    "getSeconds", "getMilliseconds", "getMinutes", "getHours", "getFullYear", "getMonth",
    "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "hasValue", "value",
    "orValue", "or", "optional.of", "optional.none", "optional.ofNonZeroValue",
})
