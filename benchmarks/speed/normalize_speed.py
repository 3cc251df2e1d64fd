"""Normalizer speed on E3C leaflets (default 20 MB).

1. ``encode_batch`` MB/s of a biotok tokenizer with its saved normalizer vs the same tokenizer
   with the normalizer removed (goal >= 0.8).
2. The saved ``tokenizers`` normalizer vs the pure-Python reference ``biotok.normalize()``,
   both line by line on one thread (goal >= 2x).

    python -m benchmarks.speed.normalize_speed [--mb 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks import corpora as C
from benchmarks._common import e3c_text, save, side_by_side, summary

from tokenizers import Tokenizer  # noqa: E402

from biotok.config import NormalizeConfig, TrainConfig  # noqa: E402
from biotok.normalize import build_normalizer, normalize  # noqa: E402
from biotok.train import train_tokenizer  # noqa: E402

BATCH = 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=20)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    path = e3c_text(args.mb, "leaflets")
    lines = path.read_text(encoding="utf-8").splitlines()
    mb = sum(len(l.encode("utf-8")) + 1 for l in lines) / 1e6
    cfg = NormalizeConfig(lowercase=True)
    with tempfile.TemporaryDirectory() as tmp:
        res = train_tokenizer(
            [REPO_SAMPLE], TrainConfig(algo="unigram", vocab_size=8000, normalize=cfg), Path(tmp) / "tok"
        )
        with_norm = Tokenizer.from_file(str(res.path / "tokenizer.json"))
    without = Tokenizer.from_str(with_norm.to_str())
    without.normalizer = None

    def enc(tok):
        return lambda: [tok.encode_batch(lines[i : i + BATCH]) for i in range(0, len(lines), BATCH)]

    t_with, t_without = side_by_side(enc(with_norm), enc(without), args.runs)
    enc_ratio = summary(t_without)["median"] / summary(t_with)["median"]

    sub = lines[: max(1, len(lines) // 4)]  # the Python reference is slow: a quarter of the text
    sub_mb = sum(len(l.encode("utf-8")) + 1 for l in sub) / 1e6
    saved = build_normalizer(cfg)
    t_saved, t_py = side_by_side(
        lambda: [saved.normalize_str(l) for l in sub], lambda: [normalize(l, cfg) for l in sub], args.runs
    )
    norm_ratio = summary(t_py)["median"] / summary(t_saved)["median"]

    out = {
        "input_mb": round(mb, 2),
        "encode_batch_with_normalizer_mb_s": round(mb / summary(t_with)["median"], 2),
        "encode_batch_without_normalizer_mb_s": round(mb / summary(t_without)["median"], 2),
        "encode_ratio_with_over_without": round(enc_ratio, 3),
        "encode_goal": ">= 0.8",
        "saved_normalizer_mb_s": round(sub_mb / summary(t_saved)["median"], 2),
        "python_reference_mb_s": round(sub_mb / summary(t_py)["median"], 2),
        "saved_over_python_speedup": round(norm_ratio, 2),
        "speedup_goal": ">= 2",
        "times": {"with": t_with, "without": t_without, "saved": t_saved, "python": t_py},
    }
    print(
        f"normalize: encode_batch {out['encode_batch_with_normalizer_mb_s']} MB/s with the saved "
        f"normalizer vs {out['encode_batch_without_normalizer_mb_s']} MB/s without: ratio "
        f"{enc_ratio:.2f} (goal >= 0.8)"
    )
    print(
        f"normalize: saved normalizer {out['saved_normalizer_mb_s']} MB/s vs Python reference "
        f"{out['python_reference_mb_s']} MB/s: {norm_ratio:.2f}x (goal >= 2x)"
    )
    print(f"-> {save('normalize_speed', out)}")


REPO_SAMPLE = C.SAMPLE

if __name__ == "__main__":
    main()
