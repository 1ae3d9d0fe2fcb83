"""Server-side printing: Table and PartialObjectMetadata answers, by JSONPath columns."""
