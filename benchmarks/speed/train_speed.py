"""`biotok train` vs the raw trainers with the same settings: wall time and peak RSS.

Pairs (each job in a fresh interpreter, biotok and baseline alternated); ``ALGO:BACKEND``,
the backend left out meaning the algorithm's default:
- unigram:tokenizers: biotok (count words on every core, feed the counts) vs ``tokenizers``
  UnigramTrainer (``Tokenizer.train([file])``, same normalizer, pre-tokenizer and options);
- bpe (tokenizers): biotok vs ``tokenizers`` BpeTrainer, likewise;
- unigram (sentencepiece): biotok (count words on every core, scaled counts, SentencePiece from
  the counts) vs ``sentencepiece`` on the text file (its own nmt_nfkc normalization, all
  sentences loaded).
Goals: wall-time ratio <= 1.10 for the tokenizers pairs; biotok's peak RSS at the largest size
<= 1.5x its RSS at the smallest. (The 1 GB / 3 GB rows: benchmarks/speed/train_scale.py.)

    python -m benchmarks.speed.train_speed [--sizes 100,1000] [--runs 3] [--vocab-size 32000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from benchmarks._common import e3c_text, run_measured, save

BIOTOK = """
from biotok.train import train_tokenizer
from biotok.config import TrainConfig, NormalizeConfig
if __name__ == "__main__":
    train_tokenizer([{path!r}], TrainConfig(algo={algo!r}, backend={backend!r}, vocab_size={vocab},
                    normalize=NormalizeConfig(lowercase=True)), {out!r}, force=True)
"""

RAW_HF = """
from tokenizers import Tokenizer, models, trainers, pre_tokenizers
from biotok.normalize import build_normalizer
from biotok.config import NormalizeConfig
specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
if {algo!r} == "unigram":
    tok = Tokenizer(models.Unigram())
    trainer = trainers.UnigramTrainer(vocab_size={vocab}, special_tokens=specials, unk_token="<unk>",
                                      max_piece_length=16, show_progress=False)
else:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    trainer = trainers.BpeTrainer(vocab_size={vocab}, min_frequency=2, special_tokens=specials,
                                  limit_alphabet=1000, max_token_length=16, show_progress=False)
tok.normalizer = build_normalizer(NormalizeConfig(lowercase=True))
tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
tok.train([{path!r}], trainer)
tok.save({out!r} + ".json")
"""

RAW_SPM = """
import sentencepiece as spm, io
spm.SentencePieceTrainer.train(input={path!r}, model_writer=io.BytesIO(), model_type="unigram",
    vocab_size={vocab}, num_threads=4, minloglevel=2, input_sentence_size=0,
    max_sentence_length=100000, character_coverage=0.9999, max_sentencepiece_length=16)
"""

BASELINES = {("unigram", "tokenizers"): RAW_HF, ("bpe", "tokenizers"): RAW_HF, ("unigram", "sentencepiece"): RAW_SPM}


def _pair(name: str) -> tuple[str, str]:
    from biotok.config import TrainConfig

    algo, _, backend = name.partition(":")
    cfg = TrainConfig(algo=algo, backend=backend or None)
    return cfg.algo, cfg.backend  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000", help="corpus sizes in MB, comma-separated")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--vocab-size", type=int, default=16000)
    ap.add_argument("--algos", default="unigram:tokenizers,bpe,unigram", help="ALGO[:BACKEND],...")
    ap.add_argument("--name", default="train_speed", help="result file name in benchmarks/results/")
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    algos = args.algos.split(",")

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mb in sizes:
            path = str(e3c_text(mb))
            for algo in algos:
                ours, base = [], []
                for i in range(args.runs):
                    a, backend = _pair(algo)
                    fmt = dict(path=path, algo=a, backend=backend, vocab=args.vocab_size,
                               out=f"{tmp}/{a}-{backend}-{mb}-{i}")
                    ours.append(run_measured(BIOTOK.format(**fmt)))
                    base.append(run_measured(BASELINES[(a, backend)].format(**fmt)))
                row = {
                    "algo": algo,
                    "mb": mb,
                    "runs": args.runs,
                    "biotok_s": {"min": min(r["seconds"] for r in ours),
                                 "median": statistics.median(r["seconds"] for r in ours)},
                    "baseline_s": {"min": min(r["seconds"] for r in base),
                                   "median": statistics.median(r["seconds"] for r in base)},
                    "biotok_rss_mb": max(r["rss_mb"] for r in ours),
                    "baseline_rss_mb": max(r["rss_mb"] for r in base),
                }
                row["time_ratio"] = row["biotok_s"]["median"] / row["baseline_s"]["median"]
                rows.append(row)
                print(
                    f"train {algo:11s} {mb:6g} MB: biotok {row['biotok_s']['median']:7.1f} s "
                    f"(min {row['biotok_s']['min']:.1f}) vs baseline {row['baseline_s']['median']:7.1f} s: "
                    f"ratio {row['time_ratio']:.2f}; peak RSS {row['biotok_rss_mb']:.0f} MB vs "
                    f"{row['baseline_rss_mb']:.0f} MB",
                    flush=True,
                )
    rss = {}
    if len(sizes) > 1:
        for algo in algos:
            small = next(r for r in rows if r["algo"] == algo and r["mb"] == sizes[0])
            large = next(r for r in rows if r["algo"] == algo and r["mb"] == sizes[-1])
            rss[algo] = large["biotok_rss_mb"] / small["biotok_rss_mb"]
            print(f"train {algo:11s} RSS {sizes[-1]:g} MB / {sizes[0]:g} MB = {rss[algo]:.2f} (goal <= 1.5)")
    out = {"vocab_size": args.vocab_size, "rows": rows, "rss_growth": rss,
           "goals": {"time_ratio": "<= 1.10 (unigram:tokenizers, bpe)", "rss_growth": "<= 1.5"}}
    print(f"-> {save(args.name, out)}")


if __name__ == "__main__":
    main()
