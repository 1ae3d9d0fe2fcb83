"""Helpers a reconciler calls on the objects it owns (controller-runtime's
``pkg/controller/controllerutil``): owner and controller references, finalizers,
``create_or_update``/``create_or_patch``. Public names are exported by
:mod:`kgen_runtime.controller`.
"""
