"""`biotok extend --add 10000` vs `biotok train` of a 32k vocabulary on the same French biomedical
text, side by side (each job in a fresh interpreter, alternated): wall time and peak RSS, and
extend's peak RSS as the corpus grows. Goal: extend no slower than train (ratio <= 1.0).
Where a WordPiece base offers fewer than ``--add`` proven pieces in the default mode, the
benchmark says so and times ``--no-strict`` (every candidate, checked on the corpus) instead.

    python -m benchmarks.speed.extend_speed [--sizes 6,12,24] [--runs 1] [--base PATH] [--workers N]

The text: :func:`french_text` (E3C, WMT-biomed, CIM-10, FrenchMedMCQA, distinct leaflet sentences).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

from benchmarks._common import CACHE, run_measured, save
from benchmarks.corpora import (TOKENIZERS, cim10_labels, frenchmedmcqa_texts, leaflet_sentences, pamj_documents,
                                require_data, wmt_biomed_french)

EXTEND = """
from biotok.extension import ExtendConfig, extend
if __name__ == "__main__":
    extend({base!r}, [{path!r}], {out!r}, ExtendConfig(add={add}, strict={strict}), force=True, workers={workers})
"""
TRAIN = """
from biotok.train import train_tokenizer
from biotok.config import TrainConfig
if __name__ == "__main__":
    train_tokenizer([{path!r}], TrainConfig(vocab_size={vocab}), {out!r}, force=True, workers={workers})
"""


def french_text(mb: float) -> str:
    """French biomedical text cut at ``mb`` MB, cached: the E3C clinical cases, the WMT-biomed
    abstracts, CIM-10, FrenchMedMCQA, then the drug leaflets' distinct sentences (the leaflets
    repeat themselves: repeated, 24 MB of them support only ~21k Unigram pieces)."""
    out = CACHE / f"french_biomed_{mb:g}MB.txt"
    if not out.is_file():
        require_data()
        CACHE.mkdir(parents=True, exist_ok=True)
        budget, tmp = int(mb * 1_000_000), out.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for src in (pamj_documents(), wmt_biomed_french(), cim10_labels(), frenchmedmcqa_texts(),
                        leaflet_sentences()):
                for line in src:
                    f.write(line + "\n")
                    budget -= len(line.encode("utf-8")) + 1
                    if budget <= 0:
                        break
                if budget <= 0:
                    break
        tmp.rename(out)
    return str(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="6,12,24", help="corpus sizes in MB; the last is timed against train")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--add", type=int, default=10000)
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--base", default=str(TOKENIZERS / "camembertv2-base"))
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mb in sizes:
            fmt = dict(base=args.base, path=french_text(mb), add=args.add, vocab=args.vocab_size,
                       workers=args.workers)
            ext, tr, strict = [], [], True
            for i in range(args.runs):
                try:
                    ext.append(run_measured(EXTEND.format(out=f"{tmp}/ext-{mb}-{i}", strict=strict, **fmt)))
                except RuntimeError as e:
                    if not strict or "is more than the" not in str(e):
                        raise
                    print(f"{mb:g} MB: {args.base} offers fewer than {args.add:,} proven pieces in the default "
                          "mode: timing --no-strict (every candidate, checked on the corpus)", flush=True)
                    strict = False
                    ext.append(run_measured(EXTEND.format(out=f"{tmp}/ext-{mb}-{i}", strict=strict, **fmt)))
                if mb == sizes[-1]:
                    tr.append(run_measured(TRAIN.format(out=f"{tmp}/train-{mb}-{i}", **fmt)))
            row = {"mb": mb, "mode": "default" if strict else "--no-strict",
                   "extend_s": statistics.median(r["seconds"] for r in ext),
                   "extend_rss_mb": max(r["rss_mb"] for r in ext)}
            if tr:
                row |= {"train_s": statistics.median(r["seconds"] for r in tr),
                        "train_rss_mb": max(r["rss_mb"] for r in tr)}
                row["time_ratio"] = row["extend_s"] / row["train_s"]
            rows.append(row)
            print(f"{mb:g} MB ({row['mode']}): " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()
                                                         if k not in ("mb", "mode")), flush=True)
        if rows[-1]["mode"] == "default" and any(r["mode"] != "default" for r in rows):  # RSS growth, one mode
            fmt = dict(base=args.base, path=french_text(sizes[-1]), add=args.add, workers=args.workers)
            r = run_measured(EXTEND.format(out=f"{tmp}/ext-loose", strict=False, **fmt))
            rows.append({"mb": sizes[-1], "mode": "--no-strict", "extend_s": r["seconds"], "extend_rss_mb": r["rss_mb"]})
            print(f"{sizes[-1]:g} MB (--no-strict): extend_s {r['seconds']:.2f}, extend_rss_mb {r['rss_mb']:.2f}")
    growth = {}
    for mode in ("default", "--no-strict"):
        same = [r for r in rows if r["mode"] == mode]
        if len(same) > 1:
            growth[mode] = same[-1]["extend_rss_mb"] / same[0]["extend_rss_mb"]
            print(f"extend peak RSS ({mode}) {same[-1]['mb']:g} MB / {same[0]['mb']:g} MB = {growth[mode]:.2f}")
    out = {"add": args.add, "vocab_size": args.vocab_size, "base": args.base, "rows": rows, "rss_growth": growth,
           "goals": {"time_ratio": "<= 1.0 (extend no slower than train)"}}
    print(f"-> {save('extend_speed', out)}")


if __name__ == "__main__":
    main()
