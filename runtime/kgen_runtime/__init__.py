"""kgen_runtime: the run-time library that kgen-generated packages plug into."""
