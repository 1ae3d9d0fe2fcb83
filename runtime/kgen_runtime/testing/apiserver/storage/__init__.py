"""The object store and what kube-apiserver's registry does around it: resource versions,
watch history, continue tokens, selectors, strategies, deletion, namespaces,
Service allocation and the bootstrap objects."""
