"""The French biomedical tokenizer study: docs/study.md, docs/study/study.json and their figures in one command.

    python -m benchmarks.experiments.study [--leaflets-mb 120] [--retrain]
    python -m benchmarks.experiments.study --from-json docs/study/study.json   # only rewrite study.md
"""

from __future__ import annotations

from dataclasses import replace
from itertools import chain
from pathlib import Path

from benchmarks import corpora as C, keyed as K, recipe as R
from benchmarks._common import CACHE, DATA, REPO, git_commit, require_data
from biotok.config import NormalizeConfig, TrainConfig as T
from biotok.corpus import iter_lines
from biotok.formats import load
from biotok.io import versions
from biotok.report.study import measure, write_markdown

COMMAND, RECIPE, HELD_OUT_PAMJ = R.command("study"), 2, 300  # RECIPE: bump when texts change (all rebuilt)
REFERENCES = ["camemberta", "camembertv2", "barthez", "flaubert", "bert", "bert-cased", "scibert"]
SOURCES = dict(pamj=C.PAMJ, leaflets=C.LEAFLETS, quaero=C.QUAERO, labforsims=C.LABFORSIMS, wmt=C.WMT_BIOMED_TRAIN)
LOWER, WMT_FR = NormalizeConfig(lowercase=True), ("medline_d1.fr", "scielo_d1.fr", "edp_d1.fr")
VARIANTS = {  # name: its TrainConfig (a smoke run divides the sizes by 10)
    "Unigram": T("unigram", "sentencepiece", 32000, NormalizeConfig()),
    "Unigram_L": T("unigram", "sentencepiece", 32000, LOWER),
    "Unigram_N_N": T("unigram", "sentencepiece", 32000, NormalizeConfig.raw()),
    "Unigram_L-plain": T("unigram", "sentencepiece", 32000, LOWER, punct_pieces=False),
    "Unigram_L-hf": T("unigram", "tokenizers", 32000, LOWER),
    "BPE": T("bpe", "tokenizers", 32000, LOWER),
    "WordPiece": T("wordpiece", "tokenizers", 32000, LOWER),
    "Unigram_L-40k": T("unigram", "sentencepiece", 40000, LOWER),
    "BPE-40k": T("bpe", "tokenizers", 40000, LOWER),
}


def texts(leaflets_mb: float) -> dict:
    """Training text: the E3C PAMJ clinical cases but the last 300, QUAERO train (MEDLINE titles + EMEA), the
    LabForSIMS dialogues, the French WMT biomedical abstracts (MEDLINE, SciELO, EDP) and the first ``leaflets_mb``
    MB of the E3C drug leaflets; held out: QUAERO test and the last 300 PAMJ cases."""
    pamj = lambda part: (p for doc in C.pamj_texts()[part] for p in C.paragraphs(doc))  # noqa: E731
    wmt = lambda: C.tar_paragraphs(C.WMT_BIOMED_TRAIN, lambda n: n.endswith(WMT_FR))  # noqa: E731
    leaflets = lambda: C.first_megabytes(iter_lines([C.LEAFLETS]), leaflets_mb)  # noqa: E731
    return {"train": lambda: chain(pamj(slice(-HELD_OUT_PAMJ)), C.quaero_paragraphs("train"), C.labforsims_turns(),
                                   wmt(), leaflets()), "heldout_quaero": lambda: C.quaero_paragraphs("test"),
            "heldout_e3c": lambda: pamj(slice(-HELD_OUT_PAMJ, None))}


def compute(a, docs: Path) -> dict:
    """study.json: the VARIANTS trained on :func:`texts` (research use: read from ../shared, never redistributed),
    each once per content key (:mod:`benchmarks.keyed`), and measured beside the REFERENCES on the held-out texts;
    every verdict of study.md is computed from it."""
    leaflets_mb, scale, work = (1, 0.1, docs / "work") if a.smoke else (a.leaflets_mb, 1.0, CACHE / "study")
    require_data()
    inputs = {"recipe": RECIPE, "leaflets_mb": leaflets_mb, "held_out_pamj": HELD_OUT_PAMJ,  # what the corpora hold
              "sources": K.file_inputs(DATA, SOURCES)}
    paths = K.keyed_texts(work / "corpora", inputs, texts(leaflets_mb))
    configs = {n: replace(c, vocab_size=int(c.vocab_size * scale)) for n, c in VARIANTS.items()}
    variants = K.trained_each(work / "tokenizers", [paths["train"]], configs, {"corpus": K.cache_key(inputs)},
                              again=a.retrain, fit=True)
    toks = {n: load(p, name=n) for n, p in variants.items()}
    toks |= {r: load(r, tokenizers_dir=C.TOKENIZERS) for r in REFERENCES}
    order = ["camemberta"] + [n for n in toks if n != "camemberta"]  # lengths are relative to CamemBERTa's
    (docs / "study").mkdir(parents=True, exist_ok=True)
    inputs |= {"corpus_key": K.cache_key(inputs), "variants": {n: c.to_dict() for n, c in configs.items()},
               "references": {r: toks[r].fingerprint for r in REFERENCES}}
    return {"leaflets_mb": leaflets_mb, "inputs": inputs, "versions": versions(), "commit": git_commit(),
            **measure(toks, order, paths, docs / "study", C.TERMS_FR)}


OPTIONS = {"--leaflets-mb": R.Flag(120, "MB of E3C drug leaflets in the training text", float),
           "--retrain": R.Flag(False, "retrain every variant even when its key is cached"),
           "--smoke": R.Flag(False, "1 MB of leaflets, vocabularies / 10, into /tmp/biotok-study-smoke (or --docs)")}
PAGE = R.Page("study", __doc__, lambda a: Path("/tmp/biotok-study-smoke") if a.smoke else REPO / "docs",
              "study/study.json", "study.md", compute, lambda res: write_markdown(res, COMMAND), OPTIONS, out="--docs")

if __name__ == "__main__":
    raise SystemExit(R.page_main(PAGE))
