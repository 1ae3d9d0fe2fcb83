"""The intermediate representation: immutable, fully named, ready to render.

Group → version → kinds and the types their schemas need. Every decision an emitter might
otherwise make (Python names, type expressions, which types are shared) is already made here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kgen import naming
from kgen_runtime.meta import FieldRules, MergeRules
from kgen_runtime.resource import ScaleSubresource

__all__ = [
    "NO_RULES",
    "RUNTIME_MODULE",
    "Alias",
    "Conversion",
    "EnumOf",
    "Field",
    "Group",
    "GroupVersion",
    "Kind",
    "ListOf",
    "MapOf",
    "MergeRules",
    "Model",
    "ModelRef",
    "Package",
    "PrinterColumn",
    "Rules",
    "Scalar",
    "ScaleSubresource",
    "TypeRef",
]

ScalarName = Literal["str", "int", "float", "bool", "any", "int_or_str"]


@dataclass(frozen=True, slots=True)
class Scalar:
    """A JSON scalar; ``any`` is any JSON value, ``int_or_str`` is Kubernetes' IntOrString."""

    name: ScalarName


@dataclass(frozen=True, slots=True)
class EnumOf:
    """A closed set of values the schema allows; decoding still accepts others of ``base``."""

    values: tuple[Any, ...]
    base: Scalar


@dataclass(frozen=True, slots=True)
class ListOf:
    item: TypeRef
    item_nullable: bool = False


@dataclass(frozen=True, slots=True)
class MapOf:
    value: TypeRef
    value_nullable: bool = False


RUNTIME_MODULE = ("kgen_runtime", "meta")
"""``ModelRef.module`` of the runtime's meta types (ObjectMeta, LabelSelector, …)."""


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A class: of the same module (``module`` None), of another generated group/version
    module (``module`` is its path), or of the runtime (``RUNTIME_MODULE``)."""

    name: str
    module: tuple[str, str] | None = None

    @property
    def apply_class(self) -> str:
        """The class's apply configuration, in its module's ``applyconfigurations``."""
        return naming.apply_configuration_class(self.name)


TypeRef = Scalar | EnumOf | ListOf | MapOf | ModelRef


Rules = FieldRules
"""Client-side constraints, checked when Python code constructs an object: the runtime's own
``FieldRules``, which the generated ``__kgen_rules__`` tables hold."""

NO_RULES = Rules()
"""The rules of an unconstrained field."""


@dataclass(frozen=True, slots=True)
class Field:
    """One property of an object schema."""

    name: str
    wire_name: str
    type: TypeRef
    description: str = ""
    nullable: bool = False
    has_default: bool = False
    default: Any = None
    format: str | None = None
    rules: Rules = NO_RULES
    merge: MergeRules | None = None
    """How server-side apply and strategic merge patch merge it (None: the schema is silent)."""
    extensions: Mapping[str, Any] = field(default_factory=dict)


ModelBase = Literal["KubeModel", "KubeObject"]


@dataclass(frozen=True, slots=True)
class Model:
    """A generated class. Kinds' root models have base ``KubeObject``."""

    name: str
    fields: tuple[Field, ...]
    description: str = ""
    path: str = ""
    """Where the schema of the first occurrence sits, e.g. ``Foo.spec.template``."""
    base: ModelBase = "KubeModel"
    extensions: Mapping[str, Any] = field(default_factory=dict)

    @property
    def apply_class(self) -> str:
        """Its apply configuration class (``FooSpecApplyConfiguration``)."""
        return naming.apply_configuration_class(self.name)


@dataclass(frozen=True, slots=True)
class Alias:
    """Another path's name for a structurally identical model (``name = target``)."""

    name: str
    target: str

    @property
    def apply_class(self) -> str:
        return naming.apply_configuration_class(self.name)

    @property
    def apply_target(self) -> str:
        return naming.apply_configuration_class(self.target)


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


@dataclass(frozen=True, slots=True)
class Kind:
    """A served kind of one group/version."""

    kind: str
    list_kind: str
    plural: str
    singular: str
    namespaced: bool
    model: str
    list_model: str
    resource_constant: str
    client_class: str
    lister_class: str
    informer_class: str
    async_client_class: str
    async_informer_class: str
    accessor: str
    """The clientset/informer method for this kind: its plural as a Python name (``foos``)."""
    extract_function: str = ""
    """Its ``applyconfigurations`` function reading what a field manager applied."""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_subresource: bool = False
    scale_subresource: ScaleSubresource | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    storage: bool = False
    deprecated: bool = False
    deprecation_warning: str | None = None
    description: str = ""

    @property
    def apply_class(self) -> str:
        """Its apply configuration class (``FooApplyConfiguration``)."""
        return naming.apply_configuration_class(self.model)


FieldPath = tuple[str | None, ...]
"""A wire path: object keys, and None for every item of a list or value of a map (the
runtime's ``EACH``)."""


@dataclass(frozen=True, slots=True)
class Conversion:
    """How a kind of a spoke group/version converts to and from its hub (the kind's storage
    version), as the two schemas decide it (Go's conversion-gen ``autoConvert_*``)."""

    kind: str
    model: str
    """The kind's model in the spoke module."""
    hub_module: tuple[str, str]
    hub_alias: str
    """The name the ``conversion`` module imports the hub's models module as."""
    hub_api_version: str
    hub_model: str
    factory: str
    """The generated function building the runtime's ``Spoke`` (``foo_spoke``)."""
    scaffold: str
    """The module constant holding the comparison (``FOO_SCAFFOLD``)."""
    stashable_type: str
    """The ``Literal`` of the hub-only paths it can stash (``FooStashable``)."""
    automatic: tuple[FieldPath, ...]
    """Same wire path, compatible schema: copied as they are."""
    hub_only: tuple[FieldPath, ...] = ()
    spoke_only: tuple[FieldPath, ...] = ()
    changed: tuple[FieldPath, ...] = ()
    """In both, with schemas of different shapes."""

    @property
    def stashable(self) -> tuple[FieldPath, ...]:
        """Hub-only paths outside lists and maps: those an annotation can keep."""
        return tuple(p for p in self.hub_only if None not in p)


@dataclass(frozen=True, slots=True)
class GroupVersion:
    """One generated module: its kinds and its models in dependency order.

    Its classes (models, kinds' clients, listers and informers, ``client_class``) and
    constants share one namespace, so no generated name shadows another."""

    group: str
    version: str
    module: tuple[str, str]
    kinds: tuple[Kind, ...]
    models: tuple[Model, ...]
    client_class: str
    """The clientset's client of this group/version (``SamplecontrollerV1alpha1Client``)."""
    async_client_class: str
    """The async clientset's (``AsyncSamplecontrollerV1alpha1Client``)."""
    aliases: tuple[Alias, ...] = ()
    conversions: tuple[Conversion, ...] = ()
    """Its kinds' conversions to their hubs, when it is a spoke of multi-version kinds."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def attribute(self) -> str:
        """The clientset property of this group/version (``samplecontroller_v1alpha1``)."""
        return "_".join(self.module)



@dataclass(frozen=True, slots=True)
class Group:
    """An API group's directory of the package and its served versions."""

    name: str
    """The API group (``""`` for the core group)."""
    module: str
    informers_class: str
    """The informer factory's class of this group (``SamplecontrollerInformers``)."""
    async_informers_class: str
    """The async informer factory's (``AsyncSamplecontrollerInformers``)."""
    versions: tuple[GroupVersion, ...]
    """Its group/versions with kinds (a directory of shared types only has none)."""


@dataclass(frozen=True, slots=True)
class Package:
    name: str
    group_versions: tuple[GroupVersion, ...]
    groups: tuple[Group, ...]
    crds: tuple[str, ...] = ()
    """The input CRDs as compact JSON (apiextensions.k8s.io/v1, sorted keys), by name."""
