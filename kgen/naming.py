"""Every naming decision of the generator, made once so all emitters agree.

* Attributes are snake_case versions of wire names, escaped when they are Python keywords,
  names the generated class body itself uses (``str``, ``int``…), or attributes of pydantic's
  ``BaseModel`` and kgen's model base (``schema``, ``json``, ``copy``, ``model_*``,
  ``deepcopy``…). Escaping appends ``_``; collisions (``fooBar`` and ``foo_bar``) get a further
  ``_`` in schema order, so the first spelling keeps the plain name.
* Class names are UpperCamelCase joins of the schema path (``FooSpecTemplate``). A kind's
  client, lister and informer classes and resource constant derive from its class name
  (``FooClient``, ``FooLister``, ``FooInformer``, ``FOO_RESOURCE``); a group/version's
  client and a group's informers from their directories (``SamplecontrollerV1alpha1Client``,
  ``SamplecontrollerInformers``). Their asyncio twins prefix ``Async`` (``AsyncFooClient``,
  ``AsyncFooInformer``, ``AsyncSamplecontrollerV1alpha1Client``,
  ``AsyncSamplecontrollerInformers``). The IR builder reserves all of them in one namespace
  per module (``unique``), every blocking name before any async one, so a kind called
  ``FooLister`` never meets ``Foo``'s lister and a kind ``AsyncFoo`` keeps its own client.
* A group/version's ``applyconfigurations`` module is a namespace of its own: one
  ``<Model>ApplyConfiguration`` per model (a pure function of the model's name, so another
  module can name it too; ``_``-suffixed where it would meet a runtime name the module
  imports) and one ``extract_<kind>`` function per kind.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable

from pydantic import BaseModel

__all__ = [
    "RESERVED_APPLY_NAMES",
    "RESERVED_MODULE_NAMES",
    "RESERVED_PACKAGE_NAMES",
    "apply_configuration_class",
    "async_client_class",
    "async_group_informers_class",
    "async_group_version_client_class",
    "async_informer_class",
    "attribute_name",
    "camel_words",
    "class_name",
    "client_class",
    "constant_name",
    "extract_function",
    "group_informers_class",
    "group_version_client_class",
    "informer_class",
    "lister_class",
    "module_name",
    "resource_constant",
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
# Names a generated group/version module (models, register, client, listers, informers)
# imports or defines besides the classes and constants the IR names.
RESERVED_MODULE_NAMES = frozenset(
    {
        "Any",
        "ClassVar",
        "Field",
        "Literal",
        "Self",
        "FieldRules",
        "KubeList",
        "KubeModel",
        "KubeObject",
        "ListMeta",
        "ObjectMeta",
        "Unstructured",
        "copy_json",
        "Resource",
        "ScaleSubresource",
        "GroupVersion",
        "Scheme",
        "GROUP",
        "VERSION",
        "GROUP_VERSION",
        "RESOURCES",
        "add_to_scheme",
        "Informers",
        "AsyncInformers",
        "rest",
        "cache",
    }
    | set(dir(builtins))
)
# Names the package-level modules (clientset, informers, fake, scheme) import or define
# besides the group/version clients and group informers the IR names.
RESERVED_PACKAGE_NAMES = frozenset(
    {
        "Any",
        "ClassVar",
        "TYPE_CHECKING",
        "cached_property",
        "BaseClientset",
        "Clientset",
        "BaseSharedInformerFactory",
        "SharedInformerFactory",
        "FakeClientsetBase",
        "FakeClientset",
        "AsyncBaseClientset",
        "AsyncClientset",
        "BaseAsyncSharedInformerFactory",
        "AsyncSharedInformerFactory",
        "AsyncFakeClientsetBase",
        "AsyncFakeClientset",
        "CRDS",
        "Resource",
        "Scheme",
        "add_to_scheme",
        "scheme",
    }
    | set(dir(builtins))
)

# Names a generated applyconfigurations module imports from the runtime (its own classes all
# end in ``ApplyConfiguration``; its module aliases start with ``_``).
RESERVED_APPLY_NAMES = frozenset(
    {
        "ApplyConfiguration",
        "ObjectApplyConfiguration",
        "ConditionApplyConfiguration",
        "FieldSelectorRequirementApplyConfiguration",
        "LabelSelectorApplyConfiguration",
        "LabelSelectorRequirementApplyConfiguration",
        "ObjectMetaApplyConfiguration",
        "OwnerReferenceApplyConfiguration",
    }
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


def client_class(model: str) -> str:
    """The typed client of a kind's class (``Foo`` → ``FooClient``), before collisions."""
    return f"{model}Client"


def lister_class(model: str) -> str:
    """``Foo`` → ``FooLister``, before collisions."""
    return f"{model}Lister"


def informer_class(model: str) -> str:
    """``Foo`` → ``FooInformer``, before collisions."""
    return f"{model}Informer"


def async_client_class(model: str) -> str:
    """The async typed client of a kind's class (``Foo`` → ``AsyncFooClient``), before
    collisions."""
    return f"Async{model}Client"


def async_informer_class(model: str) -> str:
    """``Foo`` → ``AsyncFooInformer``, before collisions."""
    return f"Async{model}Informer"


def apply_configuration_class(model: str) -> str:
    """``Foo`` → ``FooApplyConfiguration`` (``Object`` → ``ObjectApplyConfiguration_``, which
    the runtime's base class already is)."""
    name = f"{model}ApplyConfiguration"
    return f"{name}_" if name in RESERVED_APPLY_NAMES else name


def extract_function(kind: str) -> str:
    """``FooBar`` → ``extract_foo_bar`` (client-go's ``ExtractFooBar``), before collisions."""
    return f"extract_{_snake(kind) or 'kind'}"


def resource_constant(kind: str) -> str:
    """``FooBar`` → ``FOO_BAR_RESOURCE``, before collisions."""
    return f"{constant_name(kind)}_RESOURCE"


def group_version_client_class(module: tuple[str, str]) -> str:
    """``("samplecontroller", "v1alpha1")`` → ``SamplecontrollerV1alpha1Client``."""
    return f"{class_name(module)}Client"


def group_informers_class(directory: str) -> str:
    """``samplecontroller`` → ``SamplecontrollerInformers``, before collisions."""
    return f"{class_name([directory])}Informers"


def async_group_version_client_class(module: tuple[str, str]) -> str:
    """``("samplecontroller", "v1alpha1")`` → ``AsyncSamplecontrollerV1alpha1Client``."""
    return f"Async{class_name(module)}Client"


def async_group_informers_class(directory: str) -> str:
    """``samplecontroller`` → ``AsyncSamplecontrollerInformers``, before collisions."""
    return f"Async{class_name([directory])}Informers"


def constant_name(kind: str) -> str:
    """``FooBar`` → ``FOO_BAR`` (for module-level constants such as ``FOO_BAR_RESOURCE``)."""
    return _snake(kind).upper() or "KIND"


def spoke_factory(kind: str) -> str:
    """A spoke's conversion factory in its ``conversion`` module (``foo_spoke``)."""
    return f"{_snake(kind) or 'kind'}_spoke"


def hub_alias(module: tuple[str, str]) -> str:
    """How a ``conversion`` module imports its hub's models (``samplecontroller_v1alpha1``)."""
    return "_".join(module)


def scaffold_constant(kind: str) -> str:
    """The constant holding a spoke's comparison with its hub (``FOO_SCAFFOLD``)."""
    return f"{constant_name(kind)}_SCAFFOLD"


def stashable_type(model: str) -> str:
    """The ``Literal`` type of a spoke's stashable hub-only paths (``FooStashable``)."""
    return f"{model}Stashable"


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
