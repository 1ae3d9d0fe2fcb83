"""Reads and writes (controller-runtime's ``pkg/client``, ``pkg/cache`` and ``pkg/cluster``):
the typed client, the informer cache behind its reads, and the cluster that holds both with
the scheme. Imports nothing else of the controller kit. Public names are exported by
:mod:`kgen_runtime.controller`.
"""
