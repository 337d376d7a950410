"""Layer 2, plan: the static lowering of a call, and what is cached.

Windows become rows of a 2-D view (:mod:`.windows`); plans are cached per static facts
(:mod:`.cache`) and whole calls per signature (:mod:`.executors`).
"""
