"""The published French causal-LM probe (docs/results/probe-fr/): CamemBERTa, CamemBERTv2 and
biotok Unigram_L 8k / 32k and BPE 32k, one small GPT-2 each on E3C French clinical cases.

    python -m benchmarks.experiments.probe_fr            # rewrites docs/results/probe-fr/ (hours of one CPU core)
    python -m benchmarks.experiments.probe_fr --quick    # toy sizes into benchmarks/.data/probe_fr_quick/ only
    python -m benchmarks.experiments.probe_fr --publish  # only rewrite its README from {raw,fair}/probe.json

Phases (:mod:`benchmarks.probe_recipe`): (1) :func:`split`; (2) :func:`tokenizers`; (3) ``biotok-train probe``
of the five vocabularies on the training documents, scored on the held-out ones, 3 seeds, on the raw text and in
fair mode (every arm on the lowercased text, since Unigram_L lowercases and the others do not); (4) probe.md /
probe.json / probe.png of both copied to docs/results/probe-fr/{raw,fair}/ and README.md written from the two
probe.json. Work files (split, tokenizers, cached runs: resumable) live in benchmarks/.data/probe_fr/.
"""

from __future__ import annotations

import os
from itertools import islice
from pathlib import Path

from benchmarks import corpora as C, keyed as K
from benchmarks._common import REPO
from benchmarks.probe_recipe import ProbeRecipe, main
from biotok import TrainConfig
from biotok.config import NormalizeConfig

HELDOUT_EVERY = 10
FULL = dict(steps=400, seeds=(0, 1, 2), leaflet_mb=30.0, shape=dict(seq_len=128, hidden=128, lr=2e-3),
            sizes={"Unigram_L-8k": 8000, "Unigram_L-32k": 32000, "BPE-32k": 32000})
QUICK = dict(steps=30, seeds=(0,), leaflet_mb=1.0, sizes={"Unigram_L-1k": 1000, "BPE-1k": 1000},
             shape=dict(seq_len=64, hidden=64, lr=3e-3, n_resamples=300))


def split(work: Path, quick: bool) -> tuple[Path, Path]:
    """train.txt and heldout.txt: one PAMJ document a line, each 10th held out; quick: their first 200 and 20 lines."""
    train, held = C.held_out_split(C.pamj_documents(), work, HELDOUT_EVERY)
    if not quick:
        return train, held
    return tuple(C.write_lines(work / f"{p.stem}_quick.txt", islice(p.read_text(encoding="utf-8").splitlines(), n))
                 for p, n in ((train, 200), (held, 20)))


def tokenizers(work: Path, train: Path, preset: dict) -> list[str]:
    """The arms: the two references, then biotok's, trained once on the training documents and
    :func:`benchmarks.corpora.french_biomedical_lines` (never a held-out document)."""
    if not (text := work / f"tokenizer_text_{preset['leaflet_mb']:g}MB.txt").is_file():
        C.write_lines(text, C.french_biomedical_lines(preset["leaflet_mb"]), head=train.read_text(encoding="utf-8"))
    cfg = lambda name, size: TrainConfig(  # noqa: E731
        algo="unigram" if name.startswith("Unigram") else "bpe", vocab_size=size,
        normalize=NormalizeConfig(lowercase=name.startswith("Unigram_L")))
    ours = [K.trained([text], cfg(n, size), work / "tokenizers" / n, workers=1) for n, size in preset["sizes"].items()]
    return [os.path.relpath(p, REPO) for p in (C.CAMEMBERTA, C.CAMEMBERTV2, *ours)]


def vocabularies(preset: dict) -> str:
    """The arms, in words (the README's setup)."""
    ours = ", ".join(f"{n} ({s:,} pieces)" for n, s in preset["sizes"].items())
    return ("CamemBERTa-base (SentencePiece Unigram, 32k) and CamemBERTv2-base (WordPiece, 32k), both trained by "
            f"their authors on general French web text; biotok {ours}, trained on the training documents plus French "
            "biomedical text of the shared data (WMT-biomed French abstracts, CIM-10 labels, FrenchMedMCQA) and the "
            f"first {preset['leaflet_mb']:g} MB of the E3C drug leaflets: the clinical cases alone support only about "
            "11,000 Unigram_L pieces (never a held-out document).")


RECIPE = ProbeRecipe(
    "probe_fr", __doc__, "Causal-LM probe of French vocabularies on E3C clinical cases",
    REPO / "docs" / "results" / "probe-fr", FULL, QUICK, split, tokenizers,
    "the E3C layer-3 French clinical cases of the Pan African Medical Journal (CC BY 4.0), one document a line; "
    f"each {HELDOUT_EVERY}th document is held out", vocabularies)

if __name__ == "__main__":
    raise SystemExit(main(RECIPE))
