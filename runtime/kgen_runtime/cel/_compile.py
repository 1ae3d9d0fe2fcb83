"""Compiling a structural schema's ``x-kubernetes-validations`` into a tree of programs.

The tree mirrors the schema (apiextensions-apiserver's ``cel.Validator``): a node per schema
location that has rules below it, each rule compiled once with its ``messageExpression``.
What the API server refuses when a CRD is written is reported as :class:`RuleProblem` s with
the server's paths (``properties[spec].x-kubernetes-validations[0].rule``) and messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import cel as cel_package

from kgen_runtime.cel._library import FUNCTIONS, NATIVE_FUNCTIONS
from kgen_runtime.cel._values import escape, needs_conversion

__all__ = ["UNSUPPORTED", "CompiledRule", "Node", "RuleProblem", "compile_node", "functions"]

Schema = dict[str, Any]

_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid",
            "FieldValueRequired")
_OPERATOR = re.compile(r"^[_@!]|^[^A-Za-z]")
#: How the CEL package refuses cel-go's optional syntax (``self.?x``, ``[?k]``, ``{?k: v}``).
_UNSUPPORTED = "unsupported syntax"
#: The reason of a :class:`RuleProblem` that is no error: a valid rule the package cannot run.
UNSUPPORTED = "Unsupported"


@dataclass(frozen=True, slots=True)
class RuleProblem:
    """Why the API server refuses one rule: ``path`` is relative to the schema root."""

    reason: str
    path: str
    message: str


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """One ``x-kubernetes-validations`` entry, ready to run."""

    source: dict[str, Any]
    program: Any
    message_program: Any
    uses_old_self: bool
    field_path: str
    #: The library functions the rule and its messageExpression call (see ``functions``).
    functions: frozenset[str]

    @property
    def rule(self) -> str:
        return str(self.source["rule"])

    def error_string(self) -> str:
        """The rule as error messages name it: its message, else its text (ruleErrorString)."""
        message = str(self.source.get("message") or "").strip()
        return message or self.rule.strip()


@dataclass(slots=True)
class Node:
    """The compiled rules at one schema location and the nodes below it."""

    schema: Schema
    resource_root: bool
    rules: list[CompiledRule] = field(default_factory=list)
    #: Whether values here must go through ``to_cel`` (see ``needs_conversion``).
    convert: bool = True
    properties: dict[str, Node] = field(default_factory=dict)
    additional: Node | None = None
    items: Node | None = None


def compile_node(
    schema: Schema, problems: list[RuleProblem], path: str = "", *, resource_root: bool = True
) -> Node | None:
    """The node for ``schema`` (None when nothing below it has rules); problems appended."""
    node = Node(schema, resource_root)
    for index, source in enumerate(schema.get("x-kubernetes-validations") or ()):
        compiled = _compile_rule(source, schema, f"{_join(path, 'x-kubernetes-validations')}"
                                 f"[{index}]", problems, resource_root)
        if compiled is not None:
            node.rules.append(compiled)
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            child = compile_node(sub, problems, _join(path, f"properties[{name}]"),
                                 resource_root=bool(sub.get("x-kubernetes-embedded-resource")))
            if child is not None:
                node.properties[name] = child
    for key in ("additionalProperties", "items"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            child = compile_node(sub, problems, _join(path, key),
                                 resource_root=bool(sub.get("x-kubernetes-embedded-resource")))
            setattr(node, "additional" if key == "additionalProperties" else "items", child)
    if node.rules:
        node.convert = needs_conversion(schema, resource_root=resource_root)
    if node.rules or node.properties or node.additional or node.items:
        return node
    return None


def functions(node: Node | None) -> dict[str, Any]:
    """The library functions the rules of the tree at ``node`` call, by name."""
    if node is None:
        return {}
    used = {name: FUNCTIONS[name] for rule in node.rules for name in rule.functions}
    for child in (*node.properties.values(), node.additional, node.items):
        used.update(functions(child))
    return used


def _compile_rule(
    source: Any, schema: Schema, path: str, problems: list[RuleProblem], resource_root: bool
) -> CompiledRule | None:
    if not isinstance(source, dict) or not isinstance(source.get("rule"), str):
        problems.append(RuleProblem("FieldValueRequired", _join(path, "rule"),
                                    "Required value: rule is not specified"))
        return None
    shown = go_rule(source)
    before = len(problems)
    message = source.get("message")
    if isinstance(message, str) and "\n" in message:
        problems.append(RuleProblem("FieldValueInvalid", _join(path, "message"),
                                    f"Invalid value: {shown}: message must not contain line "
                                    f"breaks"))
    if "\n" in source["rule"] and not (message or "").strip():
        problems.append(RuleProblem("FieldValueRequired", _join(path, "message"),
                                    "Required value: message must be specified if rule "
                                    "contains line breaks"))
    reason = source.get("reason")
    if reason is not None and reason not in _REASONS:
        supported = ", ".join(f'"{r}"' for r in _REASONS)
        problems.append(RuleProblem("FieldValueNotSupported", _join(path, "reason"),
                                    f'Unsupported value: "{reason}": supported values: '
                                    f"{supported}"))
    field_path = ""
    if source.get("fieldPath"):
        try:
            field_path = normalize_field_path(str(source["fieldPath"]), schema)
        except ValueError as invalid:
            problems.append(RuleProblem(
                "FieldValueInvalid", _join(path, "fieldPath"),
                f"Invalid value: {json.dumps(source['fieldPath'])}: fieldPath must be a valid "
                f"path: {invalid}"))
    program, error = compile_expression(source["rule"])
    if not error:
        error = undefined_fields(source["rule"], schema, resource_root=resource_root)
    if error and _UNSUPPORTED in error:
        problems.append(RuleProblem(UNSUPPORTED, _join(path, "rule"), error))
        return None
    if error:
        problems.append(RuleProblem("FieldValueInvalid", _join(path, "rule"),
                                    f"Invalid value: {shown}: compilation failed: {error}"))
    message_program = None
    if source.get("messageExpression"):
        message_program, error = compile_expression(str(source["messageExpression"]))
        if error:
            problems.append(RuleProblem(
                "FieldValueInvalid", _join(path, "messageExpression"),
                f"Invalid value: {shown}: messageExpression compilation failed: {error}"))
    uses_old_self = program is not None and "oldSelf" in program.variables()
    if program is not None and source.get("optionalOldSelf") and not uses_old_self:
        problems.append(RuleProblem("FieldValueInvalid", _join(path, "optionalOldSelf"),
                                    "Invalid value: true: may not be set if rule does not use "
                                    "oldSelf"))
    if len(problems) > before or program is None:
        return None
    called = set(program.functions())
    if message_program is not None:
        called |= set(message_program.functions())
    return CompiledRule(source, program, message_program, uses_old_self, field_path,
                        frozenset(called & FUNCTIONS.keys()))


def compile_expression(text: str) -> tuple[Any, str]:
    """``(program, "")`` or ``(None, error)`` in cel-go's wording."""
    try:
        program = cel_package.compile(text)
    except (ValueError, RuntimeError) as error:
        message = str(error)
        prefix = f"Failed to parse expression '{text}': "
        return None, message.removeprefix(prefix)
    unknown = [name for name in program.functions()
               if not (_OPERATOR.match(name) or name in NATIVE_FUNCTIONS or name in FUNCTIONS)]
    if unknown:
        return None, "\n".join(f"ERROR: <input>: undeclared reference to '{name}' (in "
                               f"container '')" for name in unknown)
    return program, ""


_LITERAL = re.compile(r'[rR]?("""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\])*"|'
                      r"'(?:\\.|[^'\\])*')")
_CHAIN = re.compile(r"(?<![\w.])(self|oldSelf)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def undefined_fields(rule: str, schema: Schema, *, resource_root: bool = False) -> str:
    """cel-go's "undefined field" compile errors for ``self.a.b`` chains naming a property
    the schema does not declare ("" when there is none). Only plain selections from
    ``self``/``oldSelf`` through declared properties are checked."""
    blanked = _LITERAL.sub(lambda m: " " * len(m.group(0)), rule)
    errors = []
    for match in _CHAIN.finditer(blanked):
        current: Any = schema
        offset = match.start(2)
        for depth, name in enumerate(match.group(2)[1:].split(".")):
            if blanked[offset + 1 + len(name):].lstrip().startswith("("):
                break  # a method call, not a field
            root_field = depth == 0 and resource_root and name in ("apiVersion", "kind",
                                                                   "metadata")
            current = _ANY if root_field else _field(current, name)
            if current is None:
                line = rule[:offset].count("\n") + 1
                column = offset - (rule.rfind("\n", 0, offset) + 1)
                text = rule.splitlines()[line - 1] if rule else ""
                errors.append(f"ERROR: <input>:{line}:{column + 1}: undefined field '{name}'\n"
                              f"| {text}\n| {'.' * column}^")
                break
            if current is _ANY:
                break
            offset += len(name) + 1
    return "\n".join(errors)


_ANY: Schema = {}


def _field(schema: Any, name: str) -> Any:
    """The schema of field ``name`` (escaped as in CEL), _ANY when anything goes, None when
    the field does not exist."""
    if not isinstance(schema, dict) or schema.get("type") not in ("object", None):
        return _ANY
    properties = schema.get("properties")
    if properties is None:
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            return additional
        if additional is True or schema.get("x-kubernetes-preserve-unknown-fields"):
            return _ANY
        properties = {}  # an object without fields
    for key, sub in properties.items():
        if escape(key) == name:
            return sub
    if name in ("apiVersion", "kind", "metadata") and schema.get("x-kubernetes-embedded-resource"):
        return _ANY
    return None


def normalize_field_path(text: str, schema: Schema) -> str:
    """A rule's relative ``fieldPath`` (``.spec.ports['http']``) as a cause's field suffix
    (``spec.ports[http]``); ValueError when it does not name a field of ``schema``."""
    tokens = re.findall(r"\.[^.\[\]]+|\['(?:[^'\\]|\\.)*'\]|.", text)
    parts: list[str] = []
    current: Any = schema
    for token in tokens:
        if token.startswith("."):
            name = token[1:]
        elif token.startswith("['"):
            name = re.sub(r"\\(.)", r"\1", token[2:-2])
        else:
            raise ValueError(f"expected [ or . but got: {token}")
        properties = current.get("properties") if isinstance(current, dict) else None
        additional = current.get("additionalProperties") if isinstance(current, dict) else None
        if properties is not None:
            if name not in properties:
                raise ValueError("does not refer to a valid field")
            current = properties[name]
            parts.append(f".{name}")
        elif isinstance(additional, dict):
            current = additional
            parts.append(f"[{name}]")
        else:
            raise ValueError("does not refer to a valid field")
    return "".join(parts).lstrip(".")


def go_rule(source: dict[str, Any]) -> str:
    """A rule as Go's ``%#v`` prints the API server's internal ValidationRule."""

    def pointer(kind: str, value: Any) -> str:
        return f"(*{kind})(nil)" if value is None else f"(*{kind})(0xc000000000)"

    return (
        f"apiextensions.ValidationRule{{Rule:{_go_string(source.get('rule'))}, "
        f"Message:{_go_string(source.get('message'))}, "
        f"MessageExpression:{_go_string(source.get('messageExpression'))}, "
        f"Reason:{pointer('apiextensions.FieldValueErrorReason', source.get('reason'))}, "
        f"FieldPath:{_go_string(source.get('fieldPath'))}, "
        f"OptionalOldSelf:{pointer('bool', source.get('optionalOldSelf'))}}}"
    )


def _go_string(value: Any) -> str:
    return json.dumps(str(value or ""), ensure_ascii=False)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
