"""What turns informer events into queued work, one purpose per module:
:mod:`.key_handlers` (client-go's style: handlers that enqueue ``namespace/name`` keys),
:mod:`.request_handlers` (controller-runtime's ``pkg/handler``: event handlers that add
:class:`~kgen_runtime.controller.Request`\\ s) and :mod:`.predicates` (``pkg/predicate``:
which events pass). Public names are exported by :mod:`kgen_runtime.controller`.
"""
