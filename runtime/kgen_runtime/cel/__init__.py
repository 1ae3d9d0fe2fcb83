"""CRD ``x-kubernetes-validations`` (CEL rules), evaluated as kube-apiserver evaluates them.

The test API server and the fake clientset run every write of a custom resource through
these rules; applications can run the same check before sending an object::

    rules = compile_rules(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    for error in rules.validate(foo.model_dump()).errors:
        print(error)        # spec: Invalid value: "object": replicas must not exceed max

or, once, :func:`check_custom_resource` with the CRD manifest. Expressions are run by the
``common-expression-language`` package (cel-rust) with Kubernetes' CEL libraries added
(``isSorted``, ``url``, ``ip``, ``cidr``, ``quantity``, ``format.dns1123Label()`` …).

Checked when rules are compiled, as the API server does when a CRD is written: syntax,
unknown functions, fields a ``self.a.b`` selection names that the schema lacks ("undefined
field"), ``message``/``reason``/``fieldPath``/``optionalOldSelf``. Not checked: the rest of
cel-go's static type checking (a type mismatch fails when the rule runs, as "no such
overload"), cost estimation and the runtime cost budget. cel-go's optional syntax
(``self.?x``, ``m[?k]``) cannot be parsed: a rule using it is accepted but not enforced, and
listed in :attr:`CompiledRules.skipped`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import cel as cel_package

from kgen_runtime.cel._compile import UNSUPPORTED, Node, RuleProblem, compile_node, functions
from kgen_runtime.cel._evaluate import FieldError, Outcome, evaluate
from kgen_runtime.cel._library import VARIABLES
from kgen_runtime.meta import KubeModel

__all__ = [
    "CompiledRules",
    "FieldError",
    "Outcome",
    "RuleCompilationError",
    "RuleProblem",
    "check_custom_resource",
    "compile_rules",
]


class RuleCompilationError(ValueError):
    """Rules the API server would refuse; ``problems`` name each with its schema path."""

    def __init__(self, problems: list[RuleProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))


class CompiledRules:
    """The rules of one structural schema, compiled once; thread-safe to share.

    Each thread keeps one CEL context holding just the library functions the rules call:
    building a context with every function costs more than running ten rules.
    """

    def __init__(self, root: Node | None, skipped: tuple[RuleProblem, ...] = ()) -> None:
        self._root = root
        #: Valid rules this engine cannot run (cel-go's optional syntax ``self.?x``): they
        #: are not enforced. Each names the rule's schema path and the parser's message.
        self.skipped = skipped
        self._functions = functions(root)
        self._local = threading.local()

    @property
    def empty(self) -> bool:
        """True when the schema has no rules at all."""
        return self._root is None

    def validate(self, obj: Any, old: Any = None) -> Outcome:
        """Evaluate the rules over ``obj`` (JSON data); ``old`` is the stored object on
        update, for transition rules and ratcheting."""
        if self._root is None:
            return Outcome()
        context = getattr(self._local, "context", None)
        if context is None:
            context = self._local.context = cel_package.Context(dict(VARIABLES),
                                                               dict(self._functions))
        return evaluate(self._root, obj, old, context)


def compile_rules(schema: Mapping[str, Any]) -> CompiledRules:
    """Compile every rule of a CRD version's ``openAPIV3Schema``.

    Raises:
        RuleCompilationError: a rule does not compile, calls an unknown function, or has a
            message, reason or fieldPath the API server refuses.
    """
    problems: list[RuleProblem] = []
    root = compile_node(dict(schema), problems)
    errors = [p for p in problems if p.reason != UNSUPPORTED]
    if errors:
        raise RuleCompilationError(errors)
    return CompiledRules(root, tuple(p for p in problems if p.reason == UNSUPPORTED))


def check_custom_resource(
    obj: Mapping[str, Any] | KubeModel, crd: Mapping[str, Any], *,
    old: Mapping[str, Any] | KubeModel | None = None,
) -> list[FieldError]:
    """The rule failures of ``obj`` (a generated model or its JSON) under the CRD version its
    ``apiVersion`` names; ``old`` is the stored object when checking an update.

    For repeated checks, :func:`compile_rules` once and reuse the result.

    Raises:
        ValueError: the CRD does not define the object's group and version.
        RuleCompilationError: the CRD's rules do not compile.
    """
    obj, old = _wire(obj), None if old is None else _wire(old)
    spec = crd.get("spec") or {}
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    for candidate in spec.get("versions") or ():
        if group == spec.get("group") and candidate.get("name") == version:
            schema = (candidate.get("schema") or {}).get("openAPIV3Schema") or {}
            return compile_rules(schema).validate(obj, old).errors
    raise ValueError(f"the CustomResourceDefinition {crd.get('metadata', {}).get('name')!r} "
                     f"does not define {obj.get('apiVersion')!r}")


def _wire(obj: Mapping[str, Any] | KubeModel) -> Mapping[str, Any]:
    return obj.model_dump() if isinstance(obj, KubeModel) else obj
