"""Go-compatible encodings the emulator answers with: encoding/json, strconv, time and
label-value formatting as kube-apiserver writes them."""
