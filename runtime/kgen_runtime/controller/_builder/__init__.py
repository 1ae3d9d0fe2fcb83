"""The builder (controller-runtime's ``pkg/builder``): wires a controller, its watches and
predicates onto a manager's cache. It imports the manager, never the reverse: on import it
sets itself as the builder ``Manager.controller_for`` starts. Public names are exported by
:mod:`kgen_runtime.controller`.
"""
