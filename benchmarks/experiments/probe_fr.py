"""The published French causal-LM probe (docs/results/probe-fr/): CamemBERTa, CamemBERTv2 and
biotok Unigram_L 8k / 32k and BPE 32k, one small GPT-2 each on E3C French clinical cases.

    python -m benchmarks.experiments.probe_fr            # rewrites docs/results/probe-fr/ (hours of one CPU core)
    python -m benchmarks.experiments.probe_fr --quick    # toy sizes into benchmarks/.data/probe_fr_quick/ only

Phases: (1) the E3C layer-3 PAMJ clinical cases (CC BY 4.0), one document a line, each 10th
document held out; (2) ``biotok train`` of Unigram_L (lowercased Unigram) 8,000 and 32,000 and
BPE 32,000 pieces on the training documents plus other French biomedical text of the shared
data (WMT-biomed French abstracts, CIM-10 labels, FrenchMedMCQA, QUAERO, the first 30 MB of the
E3C drug leaflets): the clinical cases alone support only about 11,000 Unigram_L pieces; (3) ``biotok-train probe`` of
the five vocabularies on the training documents, scored on the held-out ones, 3 seeds, twice:
on the raw text, and in fair mode (every arm on the lowercased text, since Unigram_L lowercases
and the others do not); (4) probe.md / probe.json / probe.png of both copied to
docs/results/probe-fr/{raw,fair}/ and a README.md written from the two probe.json.
Work files (split, tokenizers, cached runs: resumable) live in benchmarks/.data/probe_fr/.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import CACHE, REPO, require_data
from biotok.io import open_text  # noqa: E402

PAMJ, LEAFLETS, TOKENIZERS = C.PAMJ, C.LEAFLETS, C.TOKENIZERS
PUBLISHED = REPO / "docs" / "results" / "probe-fr"
HELDOUT_EVERY = 10
MODES = ("raw", "fair")
TITLE = "Causal-LM probe of French vocabularies on E3C clinical cases"


def _rel(p: Path) -> Path:
    """``p`` relative to the checkout (the current folder while the script runs)."""
    return Path(os.path.relpath(p, REPO))


def split(work: Path) -> tuple[Path, Path]:
    """train.txt and heldout.txt: one PAMJ document a line (its lines joined by a space), each
    ``HELDOUT_EVERY``-th document held out. Written once."""
    from biotok.io import open_text

    train, held = work / "train.txt", work / "heldout.txt"
    if train.is_file() and held.is_file():
        return train, held
    work.mkdir(parents=True, exist_ok=True)
    with open_text(PAMJ, newline=None) as f:
        docs = [" ".join(json.loads(line)["text"].split()) for line in f if line.strip()]
    docs = [d for d in docs if d]
    for path, keep in ((held, lambda i: i % HELDOUT_EVERY == HELDOUT_EVERY - 1),
                       (train, lambda i: i % HELDOUT_EVERY != HELDOUT_EVERY - 1)):
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(d + "\n" for i, d in enumerate(docs) if keep(i)), encoding="utf-8")
        tmp.rename(path)
    return train, held


def _extra_french(w) -> None:
    """French biomedical text beyond E3C, for the tokenizers only: WMT-biomed French MEDLINE,
    SciELO and EDP abstracts, CIM-10 labels, FrenchMedMCQA questions and answers, QUAERO texts."""
    import csv
    import tarfile

    with tarfile.open(C.WMT_BIOMED_TRAIN) as t:
        for name in C.WMT_BIOMED_FR:
            for line in t.extractfile(name).read().decode("utf-8").splitlines():
                if line.strip():
                    w.write(" ".join(line.split()) + "\n")
    with open_text(C.CIM10, newline=None) as f:
        for row in csv.DictReader(f):
            w.write(row["long"] + "\n")
    for split_name in ("train", "dev", "test"):
        with open_text(C.FRENCHMEDMCQA / f"{split_name}.json.gz", newline=None) as f:
            for q in json.load(f):
                w.write(" ".join(q["question"].split()) + "\n")
                w.writelines(" ".join(a.split()) + "\n" for a in q["answers"].values())
    with tarfile.open(C.QUAERO) as t:
        for m in sorted(t.getmembers(), key=lambda m: m.name):
            if m.name.endswith(".txt") and "/corpus/" in m.name:
                w.write(" ".join(t.extractfile(m).read().decode("utf-8").split()) + "\n")


def tokenizer_text(work: Path, train: Path, leaflet_mb: float) -> Path:
    """The tokenizers' training text: the training documents, French biomedical text from the
    shared data (:func:`_extra_french`), then the first ``leaflet_mb`` MB of E3C drug-leaflet
    paragraphs; never a held-out document. (The clinical cases alone support about 11,000
    Unigram_L pieces, all of E3C's text ~30,000 with the first; 32,000 need the rest.)"""
    from biotok.io import open_text

    out = work / f"tokenizer_text_{leaflet_mb:g}MB.txt"
    if out.is_file():
        return out
    tmp = out.with_suffix(".tmp")
    budget = int(leaflet_mb * 1_000_000)
    with open(tmp, "w", encoding="utf-8") as w:
        w.write(train.read_text(encoding="utf-8"))
        _extra_french(w)
        with open_text(LEAFLETS, newline=None) as f:
            for line in f:
                for para in json.loads(line)["text"].splitlines():
                    para = " ".join(para.split())
                    if para and budget > 0:
                        w.write(para + "\n")
                        budget -= len(para.encode("utf-8")) + 1
                if budget <= 0:
                    break
    tmp.rename(out)
    return out


def biotok_tokenizers(work: Path, text: Path, sizes: dict[str, int]) -> dict[str, Path]:
    """Unigram_L (lowercased Unigram) and BPE vocabularies trained on ``text`` (kept when present)."""
    from biotok import TrainConfig, train_tokenizer
    from biotok.config import NormalizeConfig

    out = {}
    for name, size in sizes.items():
        path = work / "tokenizers" / name
        if not (path / "tokenizer.json").is_file():
            if name.startswith("Unigram_L"):
                cfg = TrainConfig(algo="unigram", vocab_size=size, normalize=NormalizeConfig(lowercase=True))
            else:
                cfg = TrainConfig(algo="bpe", vocab_size=size)
            print(f"probe_fr: training {name} ({size:,} pieces) on {text.name}", file=sys.stderr)
            train_tokenizer([text], cfg, path, force=True, workers=1)
        out[name] = path
    return out


def recipe(quick: bool, mode: str, tokenizers: list[str], train: Path, held: Path, steps: int | None,
           seeds: tuple[int, ...]):
    from biotok_train.config import ProbeConfig

    if quick:
        return ProbeConfig(tokenizers=tuple(tokenizers), corpus=(str(train),), heldout=(str(held),),
                           steps=steps or 30, batch_size=8, seq_len=64, hidden=64, heads=2, layers=2, lr=3e-3,
                           seeds=seeds, fair=mode == "fair", n_resamples=300)
    return ProbeConfig(tokenizers=tuple(tokenizers), corpus=(str(train),), heldout=(str(held),),
                       steps=steps or 400, batch_size=8, seq_len=128, hidden=128, heads=2, layers=2, lr=2e-3,
                       seeds=seeds, fair=mode == "fair")


def setup(results: dict[str, dict], sizes: dict[str, int], leaflet_mb: float) -> list[str]:
    """The README's text and vocabulary bullets (the rest is :func:`biotok_train.probe.report.published_readme`)."""
    st = next(iter(results.values()))["setup"]
    return [f"- Text: the E3C layer-3 French clinical cases of the Pan African Medical Journal (CC BY 4.0), one "
            f"document a line; each {HELDOUT_EVERY}th document is held out: {st['train_documents']:,} training "
            f"documents ({st['train_chars']:,} characters), {st['heldout_documents']:,} held-out documents "
            f"({st['heldout_chars']:,} characters).",
            "- Vocabularies: CamemBERTa-base (SentencePiece Unigram, 32k) and CamemBERTv2-base (WordPiece, 32k), "
            "both trained by their authors on general French web text; biotok "
            + ", ".join(f"{n} ({s:,} pieces)" for n, s in sizes.items())
            + f", trained on the training documents plus French biomedical text of the shared data (WMT-biomed "
            f"French abstracts, CIM-10 labels, FrenchMedMCQA, QUAERO) and the first {leaflet_mb:g} MB of the E3C "
            "drug leaflets: the clinical cases alone support only about 11,000 Unigram_L pieces (never a held-out "
            "document)."]


def readme(results: dict[str, dict], sizes: dict[str, int], leaflet_mb: float, timings: dict[str, dict],
           command: str = "python -m benchmarks.experiments.probe_fr") -> str:
    """README.md: the command, the setup and a reading in which every number comes from probe.json."""
    from biotok_train.probe.report import published_readme

    return published_readme(results, timings, title=TITLE, command=command, setup=setup(results, sizes, leaflet_mb))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="toy sizes, results kept in benchmarks/.data only")
    ap.add_argument("--steps", type=int, default=None, help="optimizer steps per arm [400; quick 30]")
    ap.add_argument("--seeds", type=int, nargs="+", default=None, help="[0 1 2; quick 0]")
    ap.add_argument("--raw-seeds", type=int, nargs="+", default=None,
                    help="seeds of the raw mode when they differ from --seeds (its runs are the like-for-like "
                         "mode's context, the fair mode carries the verdict)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    args = ap.parse_args()
    require_data()
    from biotok_train.probe import run_probe

    os.chdir(REPO)  # the published commands name paths relative to the checkout
    work = _rel(CACHE) / ("probe_fr_quick" if args.quick else "probe_fr")
    train, held = split(work)
    leaflet_mb = 1.0 if args.quick else 30.0
    sizes = ({"Unigram_L-1k": 1000, "BPE-1k": 1000} if args.quick else
             {"Unigram_L-8k": 8000, "Unigram_L-32k": 32000, "BPE-32k": 32000})
    if args.quick:  # toy: a slice of the text
        lines = train.read_text(encoding="utf-8").splitlines()
        train = work / "train_quick.txt"
        train.write_text("\n".join(lines[:200]) + "\n", encoding="utf-8")
        hl = held.read_text(encoding="utf-8").splitlines()
        held = work / "heldout_quick.txt"
        held.write_text("\n".join(hl[:20]) + "\n", encoding="utf-8")
    ours = biotok_tokenizers(work, tokenizer_text(work, train, leaflet_mb), sizes)
    tokenizers = [str(_rel(C.CAMEMBERTA)), str(_rel(C.CAMEMBERTV2)),
                  *map(str, ours.values())]
    seeds = tuple(args.seeds or ((0,) if args.quick else (0, 1, 2)))
    results, timings = {}, {}
    for mode in args.modes:
        mode_seeds = tuple(args.raw_seeds) if mode == "raw" and args.raw_seeds else seeds
        cfg = recipe(args.quick, mode, tokenizers, train, held, args.steps, mode_seeds)
        out = work / mode
        report = run_probe(cfg, out)
        results[mode] = json.loads((out / "probe.json").read_text(encoding="utf-8"))
        timings[mode] = report.timings
        print(f"probe_fr: {mode}: {out / 'probe.md'}", file=sys.stderr)
    command = " ".join(["python -m benchmarks.experiments.probe_fr", *map(shlex.quote, sys.argv[1:])])
    text = readme(results, sizes, leaflet_mb, timings, command)
    if args.quick:
        (work / "README.md").write_text(text, encoding="utf-8")
        print(f"probe_fr --quick: {work / 'README.md'}", file=sys.stderr)
        return
    for mode in results:
        dest = PUBLISHED / mode
        dest.mkdir(parents=True, exist_ok=True)
        for name in ("probe.md", "probe.json", "probe.png", "timings.json"):
            shutil.copyfile(work / mode / name, dest / name)
    (PUBLISHED / "README.md").write_text(text, encoding="utf-8")
    print(f"probe_fr: {PUBLISHED / 'README.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
