"""Layer 3, execute: the array work of every op, through the backend primitives.

Start indices become target rows (:mod:`.targets`); rows are written with a combiner on
the host or on a device (:mod:`.rows`), in memory or chunk by chunk (:mod:`.chunked`),
into the input or a copy (:mod:`.writes`).
"""
