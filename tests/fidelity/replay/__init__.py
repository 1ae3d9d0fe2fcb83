"""The differential fidelity replay: real kube-apiserver transcripts replayed against a server.

../shared/fidelity/transcripts holds request/response exchanges recorded from a real
kube-apiserver v1.36.2 (its README gives the record format and the normalisation rules).
This package replays each scenario request by request against a fresh
:class:`~kgen_runtime.testing.TestAPIServer` (or the cluster of ``$KGEN_TEST_KUBECONFIG``)
and compares every answer with the recorded one after normalising volatile values:

* :mod:`.transcripts` loads the records;
* :mod:`.volatile` keeps the bijection between recorded and replayed volatile values (uids,
  resourceVersions, generated names, cluster IPs, ...) and rewrites later requests with it;
* :mod:`.normalise` turns a body into its comparable form (tokens for volatile values,
  format-only times, orderings that are not data, foreign API groups dropped);
* :mod:`.wire` sends one recorded request over HTTP and reads the answer (watch events too);
* :mod:`.webhook` serves the webhooks of the ``webhooks`` scenario in process;
* :mod:`.settle` waits, as the recording did outside its proxy, for CRDs to be served and
  deleted CRDs and finalized namespaces to be gone (matters on a real cluster);
* :mod:`.replay` runs a scenario and compares each exchange; :mod:`.runs` keeps a pytest
  session's replays and counts; :mod:`.gaps` names the known differences
  (``known_gaps.toml``); ``python -m tests.fidelity.replay report`` prints them, with
  :mod:`.classify`'s guess of a class for the ones not listed yet.
"""
