"""CamemBERTv2 / CamemBERTa + K French biomedical pieces: held-out pieces/word against K beside fresh
vocabularies, savings vs frequency.

    python -m benchmarks.experiments.extend_fr      # 30 s with its work files cached -> docs/results/extend-fr/
    python -m benchmarks.experiments.extend_fr --from-json docs/results/extend-fr/results.json   # only README.md

Held out: every 10th line of the PAMJ sample (:func:`benchmarks.extend_measure.split`); each base of BASES extended
(:func:`benchmarks.keyed.extended`, once per folder in WORK) by 2,000 pieces on the other lines, chosen by savings
and by frequency, and by each of KS on those lines + the WMT-biomed French abstracts, beside a fresh WordPiece of
32,768 + K pieces; the page (:mod:`benchmarks.extend_page`) is computed from the numbers.
"""

from __future__ import annotations

from functools import partial

from benchmarks import extend_measure as M, keyed as K, recipe as R
from benchmarks._common import CACHE
from benchmarks.corpora import CAMEMBERTA, REPO, SAMPLE, TOKENIZERS, require_data, wmt_french_file
from benchmarks.extend_page import FIGURE, LOOSE, STRICT, figure, render
from biotok.config import TrainConfig
from biotok.extension import ExtendConfig

WORK, KS, NAIVE_K, FRESH = CACHE / "extend-fr", (500, 1000, 2000, 5000, 10000), 2000, 32768  # FRESH: + K pieces
BASES = {STRICT: TOKENIZERS / "camembertv2-base", LOOSE: TOKENIZERS / "camembertv2-base", "camemberta": CAMEMBERTA}
LABEL = {STRICT: "camembertv2 (default: proven for any text)",
         LOOSE: "camembertv2 --no-strict (checked on the corpus's words only)", "camemberta": "camemberta"}


def extension(name: str, corpus, k: int, by: str = "savings"):
    """BASES[name] + ``k`` pieces chosen ``by`` on ``corpus``, in WORK (None: fewer candidates than ``k``)."""
    folder = WORK / f"{name.split()[0]}-{corpus.stem}-{by}{'' if name != LOOSE else '-loose'}-{k}"
    return K.extended(BASES[name], [corpus], ExtendConfig(add=k, by=by, strict=name != LOOSE), folder)


def compute(a, out) -> dict:
    """results.json (and the figure): every measure of the page, its work files cached in WORK."""
    require_data()
    WORK.mkdir(parents=True, exist_ok=True)
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    held, small = M.split(lines, WORK)
    big = WORK / "train_large.txt"  # + the WMT-biomed French abstracts
    big.write_text(small.read_text("utf-8") + wmt_french_file(WORK / "wmt_fr.txt").read_text("utf-8"), "utf-8")
    ppw = lambda folder: None if folder is None else M.pieces_per_word(folder, held)  # noqa: E731
    wordpiece = lambda n: TrainConfig(algo="wordpiece", vocab_size=n)  # noqa: E731
    fresh = lambda n: K.trained([big], wordpiece(n), WORK / f"fresh-wordpiece-{n}")  # noqa: E731
    r = {"held_out_lines": len(held), "large_mb": round(big.stat().st_size / 1e6, 1),
         "base": {m: ppw(b) for m, b in BASES.items()},
         "naive": {m: {by: ppw(extension(m, small, NAIVE_K, by)) for by in ("savings", "frequency")} for m in BASES},
         "domain_wordpiece": M.domain_wordpiece(BASES[STRICT], small, held, NAIVE_K),
         "ceiling": M.ceiling(BASES[STRICT], small, held),
         "curve": {m: {str(k): ppw(extension(m, big, k)) for k in KS} for m in BASES},
         "fresh": {str(k): ppw(fresh(FRESH + k)) for k in KS}}
    texts = M.glued(lines)  # after "naive": its +2,000 folders, seeded strings
    r["glued_longer"] = {m: M.longer(BASES[m], extension(m, small, NAIVE_K), texts) for m in (STRICT, LOOSE)}
    out.mkdir(parents=True, exist_ok=True)
    figure(r, out / FIGURE)
    return r


PAGE = R.Page("extend_fr", __doc__, lambda a: REPO / "docs" / "results" / "extend-fr", "results.json", "README.md",
              compute, partial(render, labels=LABEL))

if __name__ == "__main__":
    raise SystemExit(R.page_main(PAGE))
