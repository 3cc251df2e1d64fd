"""Torch-free readers of annotated corpora: BIO/IOB2 column files (:mod:`.bio`), BRAT standoff
(:mod:`.brat`) and where the named corpora lie under the shared corpora folder (:mod:`.named`).

biotok uses them for its entity evidence; biotok_train's tasks build on them. Import from the
submodules (``biotok.datasets.bio``, ``biotok.datasets.brat``, ``biotok.datasets.named``).
"""
