"""Backends: where arrays live and segments run, behind one small interface.

``backend`` (the interface and the NumPy backend, which runs op by op without
compiling), ``jax_backend`` (compiled segments on a JAX device, their XLA memory
figures), ``kernel`` (the kernel sets the JAX backend computes with: fused, ordered,
bitwise), ``mesh_backend`` (segments over a JAX device mesh), ``cache`` (JAX's own
persistent compilation cache), ``machine`` (this machine's memory, for the one-memory
promise on CPU), ``cpus`` (how many CPUs XLA's CPU client is given). Depends on
``store`` only.
"""
