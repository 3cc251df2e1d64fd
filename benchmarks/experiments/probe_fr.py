"""The published French causal-LM probe (docs/results/probe-fr/): CamemBERTa, CamemBERTv2 and
biotok Unigram_L 8k / 32k and BPE 32k, one small GPT-2 each on E3C French clinical cases.

    python -m benchmarks.experiments.probe_fr            # rewrites docs/results/probe-fr/ (hours of one CPU core)
    python -m benchmarks.experiments.probe_fr --quick    # toy sizes into benchmarks/.data/probe_fr_quick/ only
    python -m benchmarks.experiments.probe_fr --publish  # only rewrite its README from {raw,fair}/probe.json

Phases: (1) the E3C layer-3 PAMJ clinical cases (CC BY 4.0), one document a line, each 10th
document held out; (2) ``biotok train`` of Unigram_L (lowercased Unigram) 8,000 and 32,000 and
BPE 32,000 pieces on the training documents plus other French biomedical text of the shared
data (WMT-biomed French abstracts, CIM-10 labels, FrenchMedMCQA, the first 30 MB of the E3C drug
leaflets): the clinical cases alone support only about 11,000 Unigram_L pieces; (3) ``biotok-train probe`` of
the five vocabularies on the training documents, scored on the held-out ones, 3 seeds, twice:
on the raw text, and in fair mode (every arm on the lowercased text, since Unigram_L lowercases
and the others do not); (4) probe.md / probe.json / probe.png of both copied to
docs/results/probe-fr/{raw,fair}/ and a README.md written from the two probe.json.
Work files (split, tokenizers, cached runs: resumable) live in benchmarks/.data/probe_fr/.
"""

from __future__ import annotations

import argparse
import os
import sys
from itertools import islice
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import CACHE, REPO, require_data
from biotok import TrainConfig, train_tokenizer
from biotok.config import NormalizeConfig
from biotok_train.config import ProbeConfig
from biotok_train.probe.report import publish, published_readme, read_published, setup_bullets

PUBLISHED, SCRIPT = REPO / "docs" / "results" / "probe-fr", "python -m benchmarks.experiments.probe_fr"
TITLE = "Causal-LM probe of French vocabularies on E3C clinical cases"
HELDOUT_EVERY, MODES = 10, ("raw", "fair")
FULL = dict(steps=400, seeds=(0, 1, 2), leaflet_mb=30.0, sizes={"Unigram_L-8k": 8000, "Unigram_L-32k": 32000, "BPE-32k": 32000},
            shape=dict(seq_len=128, hidden=128, lr=2e-3))
QUICK = dict(steps=30, seeds=(0,), leaflet_mb=1.0, sizes={"Unigram_L-1k": 1000, "BPE-1k": 1000},
             shape=dict(seq_len=64, hidden=64, lr=3e-3, n_resamples=300))


def split(work: Path, quick: bool) -> tuple[Path, Path]:
    """train.txt and heldout.txt: one PAMJ document a line, each 10th held out; --quick: their
    first 200 and 20 lines."""
    train, held = C.held_out_split(C.pamj_documents(), work, HELDOUT_EVERY)
    if not quick:
        return train, held
    return tuple(C.write_lines(work / f"{p.stem}_quick.txt", islice(p.read_text(encoding="utf-8").splitlines(), n))
                 for p, n in ((train, 200), (held, 20)))


def tokenizers(work: Path, train: Path, leaflet_mb: float, sizes: dict[str, int]) -> list[str]:
    """The arms: the two references, then biotok's, trained once on the training documents and
    :func:`benchmarks.corpora.french_biomedical_lines` (never a held-out document)."""
    text = work / f"tokenizer_text_{leaflet_mb:g}MB.txt"
    if not text.is_file():
        C.write_lines(text, C.french_biomedical_lines(leaflet_mb), head=train.read_text(encoding="utf-8"))
    ours = []
    for name, size in sizes.items():
        ours.append(path := work / "tokenizers" / name)
        if not (path / "tokenizer.json").is_file():
            lower = NormalizeConfig(lowercase=name.startswith("Unigram_L"))
            cfg = TrainConfig(algo="unigram" if name.startswith("Unigram") else "bpe", vocab_size=size, normalize=lower)
            print(f"probe_fr: training {name} ({size:,} pieces) on {text.name}", file=sys.stderr)
            train_tokenizer([text], cfg, path, force=True, workers=1)
    return [os.path.relpath(p, REPO) for p in (C.CAMEMBERTA, C.CAMEMBERTV2, *ours)]


def command(results: dict[str, dict], quick: bool) -> str:
    """The command line that gives ``results`` (each mode's probe.json), defaults left out."""
    base, parts = QUICK if quick else FULL, [SCRIPT, "--quick"] if quick else [SCRIPT]
    main = results.get("fair", results.get("raw"))["setup"]
    raw = results["raw"]["setup"]["seeds"] if "raw" in results else main["seeds"]
    if main["steps"] != base["steps"]:
        parts += ["--steps", str(main["steps"])]
    if tuple(main["seeds"]) != base["seeds"]:
        parts += ["--seeds", *map(str, main["seeds"])]
    if raw != main["seeds"]:
        parts += ["--raw-seeds", *map(str, raw)]
    return " ".join(parts + (["--modes", *results] if tuple(results) != MODES else []))


def readme(results: dict[str, dict], timings: dict[str, dict], quick: bool = False) -> str:
    """README.md from each mode's probe.json and timings.json: every number comes from them."""
    base = QUICK if quick else FULL
    vocabularies = ("CamemBERTa-base (SentencePiece Unigram, 32k) and CamemBERTv2-base (WordPiece, 32k), both trained "
                    "by their authors on general French web text; biotok "
                    + ", ".join(f"{n} ({s:,} pieces)" for n, s in base["sizes"].items())
                    + ", trained on the training documents plus French biomedical text of the shared data (WMT-biomed "
                    f"French abstracts, CIM-10 labels, FrenchMedMCQA) and the first {base['leaflet_mb']:g} "
                    "MB of the E3C drug leaflets: the clinical cases alone support only about 11,000 Unigram_L pieces "
                    "(never a held-out document).")
    text = ("the E3C layer-3 French clinical cases of the Pan African Medical Journal (CC BY 4.0), one document a "
            f"line; each {HELDOUT_EVERY}th document is held out")
    return published_readme(results, timings, title=TITLE, command=command(results, quick),
                            setup=setup_bullets(results, text=text, vocabularies=vocabularies))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="toy sizes, results kept in benchmarks/.data only")
    ap.add_argument("--publish", action="store_true", help="only rewrite README.md from the published probe.json files")
    ap.add_argument("--steps", type=int, default=None, help="optimizer steps per arm [400; quick 30]")
    ap.add_argument("--seeds", type=int, nargs="+", default=None, help="[0 1 2; quick 0]")
    ap.add_argument("--raw-seeds", type=int, nargs="+", default=None,
                    help="seeds of the raw mode when they differ from --seeds (its runs are the like-for-like "
                         "mode's context, the fair mode carries the verdict)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    args = ap.parse_args()
    if args.publish:
        if not (published := read_published(PUBLISHED))[0]:
            print(f"probe_fr --publish: no raw/ nor fair/ probe.json in {PUBLISHED}", file=sys.stderr)
            raise SystemExit(2)
        print(f"probe_fr: {publish({}, PUBLISHED, readme(*published))}", file=sys.stderr)
        return
    require_data()
    from biotok_train.probe import run_probe  # lazy: torch only when the probe runs

    os.chdir(REPO)  # the published commands name paths relative to the checkout
    base, work = QUICK if args.quick else FULL, Path(os.path.relpath(CACHE, REPO)) / f"probe_fr{'_quick' * args.quick}"
    train, held = split(work, args.quick)
    arms = tokenizers(work, train, base["leaflet_mb"], base["sizes"])
    runs = {}
    for mode in args.modes:
        seeds = tuple(args.raw_seeds if mode == "raw" and args.raw_seeds else args.seeds or base["seeds"])
        cfg = ProbeConfig(tokenizers=tuple(arms), corpus=(str(train),), heldout=(str(held),), steps=args.steps or base["steps"],
                          batch_size=8, heads=2, layers=2, seeds=seeds, fair=mode == "fair", **base["shape"])
        run_probe(cfg, runs.setdefault(mode, work / mode))
    text = readme(*read_published(work, args.modes), quick=args.quick)
    dest = work if args.quick else PUBLISHED
    print(f"probe_fr: {publish({} if args.quick else runs, dest, text)}", file=sys.stderr)


if __name__ == "__main__":
    main()
