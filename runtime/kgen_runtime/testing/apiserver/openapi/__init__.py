"""OpenAPI: the bundled built-in documents, CRD schemas, and the structure (field and list
types), enums, required fields and zero values the emulator validates built-in kinds by."""
