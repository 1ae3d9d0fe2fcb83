"""REST transport and clients (client-go's rest and dynamic packages)."""

from kgen_runtime.rest._request import Request, Response, Transport
from kgen_runtime.rest.options import ListOptions

__all__ = ["ListOptions", "Request", "Response", "Transport"]
