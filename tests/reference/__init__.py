"""The oracles: slow, literal loop transcriptions of each op's specification.

One module per spec. They work on NumPy arrays only and are kept obviously correct rather
than fast; every backend's result is compared against them.
"""
