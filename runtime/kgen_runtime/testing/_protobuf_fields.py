"""Protobuf field numbers of the built-in kinds, and which Go fields are pointers.

Facts of Kubernetes' Go types: each field's ``protobuf:"<wire>,<number>,..."`` struct tag (the
numbers ``generated.proto`` carries) and its Go type and ``json`` tag, read from the
``types.go`` files of k8s.io/apimachinery ``pkg/apis/meta/v1`` and k8s.io/api ``<group>/<version>``
(kubernetes/kubernetes ``staging/src``, v1.36). The field *types* are not repeated here: they
come from the bundled OpenAPI documents (:mod:`._openapi`), whose property names are the proto
field names (go-to-protobuf names every field after its JSON name).

One line per message (its OpenAPI schema name, without the package prefix of its block),
then ``field=number`` for every field, with a suffix where the Go type says how the field is
written and read:

* no suffix: a Go value field with ``omitempty``: Go's marshaller always writes it (an empty
  string, a zero, an empty message), and JSON leaves a zero scalar out;
* ``*``: a pointer (``*int32``, ``*bool``, ``*PodSecurityContext``...): written only when set,
  and a zero that was set is kept;
* ``!``: a Go value field without ``omitempty``: its zero is kept in JSON;
* ``?`` instead of a number: a field the v1.36 OpenAPI has but whose number was not in the
  sources read (alpha fields the test server never sets); an object that sets one is
  answered in JSON.

Slices and maps need no suffix: Go writes their elements, nothing for an empty one.
"""

from __future__ import annotations

__all__ = ["FIELDS"]

_BLOCKS: dict[str, str] = {
    # k8s.io/apimachinery/pkg/apis/meta/v1/types.go
    "io.k8s.apimachinery.pkg.apis.meta.v1.": """
ListMeta selfLink=1 resourceVersion=2 continue=3 remainingItemCount=4* shardInfo=?
ObjectMeta name=1 generateName=2 namespace=3 selfLink=4 uid=5 resourceVersion=6 generation=7
  creationTimestamp=8 deletionTimestamp=9* deletionGracePeriodSeconds=10* labels=11
  annotations=12 ownerReferences=13 finalizers=14 managedFields=17
OwnerReference kind=1! name=3! uid=4! apiVersion=5! controller=6* blockOwnerDeletion=7*
DeleteOptions gracePeriodSeconds=1* preconditions=2* orphanDependents=3* propagationPolicy=4*
  dryRun=5 ignoreStoreReadErrorWithClusterBreakingPotential=6*
Preconditions uid=1* resourceVersion=2*
Status metadata=1 status=2 message=3 reason=4 details=5* code=6
StatusDetails name=1 group=2 kind=3 causes=4 retryAfterSeconds=5 uid=6
StatusCause reason=1 message=2 field=3
LabelSelector matchLabels=1 matchExpressions=2
LabelSelectorRequirement key=1! operator=2! values=3
ManagedFieldsEntry manager=1 operation=2 apiVersion=3 time=4* fieldsType=6 fieldsV1=7*
  subresource=8
Condition type=1! status=2! observedGeneration=3 lastTransitionTime=4! reason=5! message=6!
""",
    # k8s.io/api/core/v1/types.go
    "io.k8s.api.core.v1.": """
ConfigMap metadata=1 data=2 binaryData=3 immutable=4*
ConfigMapList metadata=1 items=2
""",
}


def _parse(blocks: dict[str, str]) -> dict[str, dict[str, tuple[int, str]]]:
    table: dict[str, dict[str, tuple[int, str]]] = {}
    for prefix, text in blocks.items():
        name = ""
        for line in text.splitlines():
            words = line.split()
            if not words:
                continue
            if not line[0].isspace():
                name, words = prefix + words[0], words[1:]
                table[name] = {}
            for word in words:
                field, number = word.split("=")
                flag = number[-1] if number[-1] in "*!?" else ""
                table[name][field] = (int(number.rstrip("*!?") or 0), flag)
    return table


#: Schema name -> field name -> (field number, ``""``/``"*"``/``"!"`` as described above).
FIELDS = _parse(_BLOCKS)
