"""The store: what bladec keeps across processes, in a cache directory.

``cachedir`` (a directory of bounded, atomically written entries), ``listings``
(optimized listings by source and passes), ``executables`` (compiled segments by what
they compute, with their memory figures), ``hints`` (earlier searches' answers). Every
entry is untrusted when read back. Depends on nothing else in the runtime.
"""
