"""OpenAPI: the bundled built-in documents, CRD schemas, the /openapi endpoints, and the
structure, enums, required fields and zero values the emulator validates built-in kinds by."""
