"""kgen: generate typed Python Kubernetes packages from CRDs and OpenAPI v3 documents."""

__version__ = "0.1.0"
