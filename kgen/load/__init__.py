"""Read the generator's inputs into plain data, with errors that say where."""

from kgen.load.crd import CRDSource, load_crds
from kgen.load.documents import Document, read_documents

__all__ = ["CRDSource", "Document", "load_crds", "read_documents"]
