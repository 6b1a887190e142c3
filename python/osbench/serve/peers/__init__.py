"""Optional peers: the real schedulers osbench's engines are held to, run from their own Python
sources (:mod:`~osbench.serve.peers.fetch` unpacks them from a wheel,
:mod:`~osbench.serve.peers.sandbox` imports them without the GPU stack they come with). The
drivers are per peer (:mod:`osbench.serve.vllm.peer`)."""
