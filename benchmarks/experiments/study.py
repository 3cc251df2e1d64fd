"""The French biomedical tokenizer study: rebuilds docs/study.md and its figures in one command.

    python -m benchmarks.experiments.study [--leaflets-mb 120] [--retrain]
    python -m benchmarks.experiments.study --from-json docs/study/study.json   # only rewrite study.md

1. Training text: E3C French clinical cases (PAMJ, all but the last 300 documents), E3C drug
   leaflets (the first ``--leaflets-mb`` MB), QUAERO train (MEDLINE titles + EMEA), LabForSIMS
   doctor-patient dialogues, the French side of the WMT biomedical training abstracts
   (MEDLINE, SciELO, EDP; research use, read from ../shared, never redistributed).
2. Held-out text: QUAERO test (MEDLINE + EMEA) and the last 300 PAMJ clinical cases.
3. Trains the AliBERT paper's variants at 32,000 pieces (Unigram, Unigram_L, Unigram_N_N with
   SentencePiece, as AliBERT did; BPE and WordPiece with tokenizers), the HF tokenizers Unigram
   trainer and Unigram without punctuation pieces for comparison, and Unigram_L and BPE at
   40,000 (or the most the text supports), then compares them with the shared CamemBERTa,
   CamemBERTv2, BARThez, FlauBERT, BERT and SciBERT tokenizers.
4. Writes docs/study.md (tables + verdicts computed from the numbers), docs/study/study.json
   (with the inputs' hashes, library versions and git commit) and the figures of
   ``biotok report`` in docs/study/.

Caching is keyed on the inputs: the derived corpora live under a key made of the recipe, the
arguments and the sha256 of every source file; each tokenizer under a key made of the corpus
key, its full TrainConfig and the library versions. A changed argument rebuilds exactly what
it affects; ``--retrain`` retrains regardless.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import CACHE, DATA, REPO, git_commit, require_data
from biotok.config import NormalizeConfig, TrainConfig
from biotok.corpus import iter_lines
from biotok.errors import VocabSizeError
from biotok.formats import load
from biotok.io import sha256_file, versions
from biotok.output import atomic_directory
from biotok.report.study import measure, write_markdown
from biotok.train import train_tokenizer

COMMAND = "python -m benchmarks.experiments.study"
RECIPE = 2  # bump when build_corpora selects text differently: every cached corpus is then rebuilt
HELD_OUT_PAMJ = 300
REFERENCES = ["camemberta", "camembertv2", "barthez", "flaubert", "bert", "bert-cased", "scibert"]
SOURCES = {name: path.relative_to(DATA).as_posix() for name, path in  # paths in the shared data, as study.json records them
           {"pamj": C.PAMJ, "leaflets": C.LEAFLETS, "quaero": C.QUAERO, "labforsims": C.LABFORSIMS,
            "wmt": C.WMT_BIOMED_TRAIN}.items()}
LOWER = NormalizeConfig(lowercase=True)
VARIANTS = {  # name: (algo, backend, vocab, normalize config, punctuation pieces)
    "Unigram": ("unigram", "sentencepiece", 32000, NormalizeConfig(), True),
    "Unigram_L": ("unigram", "sentencepiece", 32000, LOWER, True),
    "Unigram_N_N": ("unigram", "sentencepiece", 32000, NormalizeConfig.raw(), True),
    "Unigram_L-plain": ("unigram", "sentencepiece", 32000, LOWER, False),
    "Unigram_L-hf": ("unigram", "tokenizers", 32000, LOWER, True),
    "BPE": ("bpe", "tokenizers", 32000, LOWER, True),
    "WordPiece": ("wordpiece", "tokenizers", 32000, LOWER, True),
    "Unigram_L-40k": ("unigram", "sentencepiece", 40000, LOWER, True),
    "BPE-40k": ("bpe", "tokenizers", 40000, LOWER, True),
}


def cache_key(obj: object) -> str:
    """A short, stable hash of JSON-able inputs: equal inputs, equal key."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def variant_configs(scale: float = 1.0) -> dict[str, TrainConfig]:
    """The TrainConfig of each variant (``scale`` shrinks vocabularies for a smoke run)."""
    return {
        name: TrainConfig(algo=algo, backend=backend, vocab_size=int(vocab * scale), normalize=norm,
                          punct_pieces=punct)
        for name, (algo, backend, vocab, norm, punct) in VARIANTS.items()
    }


def corpus_inputs(leaflets_mb: float) -> dict:
    """Everything the derived corpora depend on: recipe, arguments, source file hashes."""
    return {
        "recipe": RECIPE,
        "leaflets_mb": leaflets_mb,
        "held_out_pamj": HELD_OUT_PAMJ,
        "sources": {k: {"path": p, "sha256": sha256_file(DATA / p)} for k, p in SOURCES.items()},
    }


def build_corpora(work: Path, inputs: dict) -> dict[str, Path]:
    """train.txt and the two held-out texts, built once per input key under ``work/corpora``."""
    out = work / "corpora" / cache_key(inputs)
    names = ("train", "heldout_quaero", "heldout_e3c")
    if (out / "inputs.json").is_file():
        return {k: out / f"{k}.txt" for k in names}
    pamj = C.pamj_texts()
    wmt = C.tar_paragraphs(C.WMT_BIOMED_TRAIN, lambda n: n.endswith(("medline_d1.fr", "scielo_d1.fr", "edp_d1.fr")))
    with atomic_directory(out, force=True) as tmp:
        with open(tmp / "train.txt", "w", encoding="utf-8") as f:
            for doc in pamj[:-HELD_OUT_PAMJ]:
                f.writelines(p + "\n" for p in C.paragraphs(doc))
            for p in C.quaero_paragraphs("train") + C.labforsims_turns() + wmt:
                f.write(p + "\n")
            budget = int(inputs["leaflets_mb"] * 1e6)
            for line in iter_lines([C.LEAFLETS]):
                f.write(line + "\n")
                budget -= len(line.encode("utf-8")) + 1
                if budget <= 0:
                    break
        (tmp / "heldout_quaero.txt").write_text("\n".join(C.quaero_paragraphs("test")) + "\n", encoding="utf-8")
        (tmp / "heldout_e3c.txt").write_text(
            "\n".join(p for d in pamj[-HELD_OUT_PAMJ:] for p in C.paragraphs(d)) + "\n", encoding="utf-8"
        )
        (tmp / "inputs.json").write_text(json.dumps(inputs, indent=2) + "\n", encoding="utf-8")
    return {k: out / f"{k}.txt" for k in names}


def train_variants(
    work: Path, train: Path, corpus_key: str, configs: dict[str, TrainConfig], retrain: bool
) -> dict[str, Path]:
    """Train each variant once per (corpus, config, library versions); reuse it otherwise."""
    out = {}
    for name, cfg in configs.items():
        key = cache_key({"corpus": corpus_key, "config": cfg.to_dict(), "versions": versions()})
        d = work / "tokenizers" / f"{name}-{key}"
        if retrain or not (d / "biotok.json").is_file():
            start = time.perf_counter()
            try:
                train_tokenizer([train], cfg, d, force=True)
            except VocabSizeError as e:
                if not e.too_large:
                    raise
                # the text supports fewer pieces: take the largest, in thousands
                size = e.supported // 1000 * 1000
                print(f"{name}: {e}; training at {size}", flush=True)
                train_tokenizer([train], replace(cfg, vocab_size=size), d, force=True)
            print(f"trained {name} in {time.perf_counter() - start:.0f} s", flush=True)
        out[name] = d
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--leaflets-mb", type=float, default=120, help="MB of E3C drug leaflets in the training text")
    ap.add_argument("--retrain", action="store_true", help="retrain every variant even when its key is cached")
    ap.add_argument("--smoke", action="store_true",
                    help="1 MB of leaflets, vocabularies / 10, output under /tmp/biotok-study-smoke (or --docs)")
    ap.add_argument("--from-json", type=Path, default=None, metavar="STUDY_JSON",
                    help="only rewrite study.md (next to docs/study/) from an existing study.json")
    ap.add_argument("--docs", type=Path, default=None, help="where study.md and study/ go [docs/]")
    args = ap.parse_args()
    docs = args.docs or (Path("/tmp/biotok-study-smoke") if args.smoke else REPO / "docs")
    if args.from_json is not None:
        if not args.from_json.is_file():
            print(f"study --from-json: {args.from_json} not found", file=sys.stderr)
            raise SystemExit(2)
        docs.mkdir(parents=True, exist_ok=True)
        res = json.loads(args.from_json.read_text(encoding="utf-8"))
        (docs / "study.md").write_text(write_markdown(res, COMMAND), encoding="utf-8")
        print(f"-> {docs / 'study.md'}")
        return
    work, scale = CACHE / "study", 1.0
    if args.smoke:
        args.leaflets_mb, scale, work = 1, 0.1, docs / "work"
    require_data()
    inputs = corpus_inputs(args.leaflets_mb)
    paths = build_corpora(work, inputs)
    variants = train_variants(work, paths["train"], cache_key(inputs), variant_configs(scale), args.retrain)
    toks = {n: load(p, name=n) for n, p in variants.items()}
    for alias in REFERENCES:
        toks[alias] = load(alias, tokenizers_dir=C.TOKENIZERS)
    order = ["camemberta"] + [n for n in toks if n != "camemberta"]  # relative length vs CamemBERTa
    fig = docs / "study"
    fig.mkdir(parents=True, exist_ok=True)
    res = {
        "leaflets_mb": args.leaflets_mb,
        "inputs": {**inputs, "corpus_key": cache_key(inputs),
                   "variants": {n: c.to_dict() for n, c in variant_configs(scale).items()},
                   "references": {a: toks[a].fingerprint for a in REFERENCES}},
        "versions": versions(),
        "commit": git_commit(),
        **measure(toks, order, paths, fig, C.TERMS_FR),
    }
    (fig / "study.json").write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (docs / "study.md").write_text(write_markdown(res, COMMAND), encoding="utf-8")
    print(f"-> {docs / 'study.md'}")


if __name__ == "__main__":
    main()
