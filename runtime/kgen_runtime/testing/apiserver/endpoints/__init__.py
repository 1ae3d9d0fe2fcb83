"""The HTTP face of the emulator, as kube-apiserver's endpoints/handlers: request bodies
(JSON, YAML, protobuf), query parameters and write options, buffered and streamed watch
responses."""
