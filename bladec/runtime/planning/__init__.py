"""Planning: from a binding of the symbols to a prepared run that fits the limit.

In the order a run meets them: ``binding`` (symbols from input shapes), ``planner``
(what the listing's remat sites cost under this binding), ``policy`` with ``plan``,
``trace``, ``budget`` and ``consolidation/`` (what to evict and when, on the per-op
model, and the plan tidied to fewer cut points), ``segments`` (the plan cut into compiled segments), ``accounting`` (the
device peak of a cut plan by the backend's own figures), ``repair`` and ``fitting``
(the closed loop: tighten until the device peak fits, or name the smallest limit that
works: ``limit.LimitError``). Depends on ``backends`` and ``store``, never on the front.
"""
