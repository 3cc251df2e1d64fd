"""The default Unigram from 100 MB to 3 GB, beside raw SentencePiece and the `tokenizers` trainer.

One run, side by side, each job in a fresh interpreter under /usr/bin/time (wall seconds, peak
RSS), on text repeated from ../shared/data (E3C clinical cases, then drug leaflets):

- ``biotok``: ``biotok train FILE --algo unigram --lower`` (the default backend, SentencePiece,
  trained from word counts made on every core, counts scaled to the SentencePiece budget);
- ``sentencepiece``: SentencePiece itself on the text file (its own normalization, every
  sentence loaded), skipped when its predicted peak RSS would not fit (the machine's 24 GiB, or
  the memory available when the row starts) or when it exceeds ``--baseline-timeout``;
- ``tokenizers``: the ``tokenizers`` UnigramTrainer on the file with biotok's normalizer.

Then: the RSS ratio of biotok at the largest size over the smallest (goal <= 1.5); worker
scaling of ``biotok count`` on the middle size (1, 2, ... cores); counting speed per core,
``biotok count --workers 1`` against the ``tokenizers`` BPE trainer's own word counting on one
thread (``RAYON_NUM_THREADS=1``, a vocabulary so small that its merges cost nothing).

    python -m benchmarks.speed.train_scale                      # 100 MB, 1 GB, 3 GB (about 1.5 h on 2 cores)
    python -m benchmarks.speed.train_scale --quick              # 3 and 9 MB: checks that the script runs
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._common import REPO, e3c_text, save

LIMIT_GIB = 24.0

RAW_SPM = """
import io, sentencepiece as spm
spm.SentencePieceTrainer.train(input={path!r}, model_writer=io.BytesIO(), model_type="unigram",
    vocab_size={vocab}, num_threads=4, minloglevel=2, input_sentence_size=0, hard_vocab_limit=False,
    max_sentence_length=100000, character_coverage=0.9999, max_sentencepiece_length=16)
"""

RAW_HF = """
from tokenizers import Tokenizer, models, trainers, pre_tokenizers
from biotok.normalize import build_normalizer
from biotok.config import NormalizeConfig
tok = Tokenizer(models.Unigram())
tok.normalizer = build_normalizer(NormalizeConfig(lowercase=True))
tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\\u2581", prepend_scheme="always", split=True)
trainer = trainers.UnigramTrainer(vocab_size={vocab}, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                                  unk_token="<unk>", max_piece_length=16, show_progress=False)
tok.train([{path!r}], trainer)
"""

HF_COUNT = """
from tokenizers import Tokenizer, models, trainers, pre_tokenizers
from biotok.normalize import build_normalizer
from biotok.config import NormalizeConfig
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.normalizer = build_normalizer(NormalizeConfig(lowercase=True))
tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\\u2581", prepend_scheme="always", split=True)
tok.train([{path!r}], trainers.BpeTrainer(vocab_size=1, show_progress=False))
"""


def _tree_rss(proc) -> int:
    """Bytes of resident memory of a process and all its descendants (0 once it is gone)."""
    import psutil

    try:
        p = psutil.Process(proc.pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def measure(cmd: list[str], env: dict | None = None, timeout: float | None = None) -> dict:
    """Run ``cmd`` under /usr/bin/time: wall and CPU seconds, peak RSS (MB), or why it stopped.

    ``rss_mb`` is GNU time's peak (the largest single process); ``tree_rss_mb`` the peak of the
    sum over the process and its workers, sampled every 0.2 s.
    """
    import time

    full = ["/usr/bin/time", "-f", "__TIME__ %e %U %S %M", *cmd]
    proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env={**os.environ, **(env or {})})
    peak, start = 0, time.monotonic()
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc))
        if timeout is not None and time.monotonic() - start > timeout:
            proc.kill()
            proc.communicate()
            return {"skipped": f"stopped after the {timeout:.0f} s time limit"}
        time.sleep(0.2)
    _, stderr = proc.communicate()
    lines = [l for l in stderr.splitlines() if l.startswith("__TIME__")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"benchmark job failed: {' '.join(cmd)}\n{stderr[-3000:]}")
    _, wall, user, sys_, rss_kb = lines[-1].split()
    return {"seconds": float(wall), "cpu_seconds": float(user) + float(sys_), "rss_mb": int(rss_kb) / 1024,
            "tree_rss_mb": max(peak / 2**20, int(rss_kb) / 1024)}


def available_gib() -> float:
    try:
        import psutil

        return psutil.virtual_memory().available / 2**30
    except ImportError:  # pragma: no cover - psutil is a dev dependency
        return LIMIT_GIB


def predict_rss(rows: list[dict], mb: float) -> float | None:
    """Peak RSS (MB) of a baseline at ``mb``, extrapolated linearly from its measured sizes."""
    pts = [(r["mb"], r["tree_rss_mb"]) for r in rows if "tree_rss_mb" in r]
    if len(pts) < 2:
        return None
    (x0, y0), (x1, y1) = pts[-2], pts[-1]
    slope = (y1 - y0) / (x1 - x0) if x1 != x0 else 0.0
    return y1 + slope * (mb - x1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000,3000", help="corpus sizes in MB, comma-separated")
    ap.add_argument("--vocab-size", type=int, default=16000,
                    help="16,000: the repeated E3C text supports about 27,000 pieces")
    ap.add_argument("--baselines", default="sentencepiece,tokenizers")
    ap.add_argument("--baseline-timeout", type=float, default=3600.0, help="seconds per baseline job")
    ap.add_argument("--scaling-size", type=float, default=None, help="MB for the worker scaling (default: middle size)")
    ap.add_argument("--name", default="train_scale")
    ap.add_argument("--rows-only", action="store_true", help="only the training rows (no worker scaling, no per-core counting)")
    ap.add_argument("--quick", action="store_true", help="3 and 9 MB, vocab 4000: checks that everything runs")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.vocab_size, args.name = "3,9", 4000, "train_scale_quick"
    sizes = [float(s) for s in args.sizes.split(",")]
    baselines = [b for b in args.baselines.split(",") if b]
    cores = len(os.sched_getaffinity(0))
    biotok = [sys.executable, "-m", "biotok.cli"]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="biotok-bench-") as tmp:
        for mb in sizes:
            path = str(e3c_text(mb))
            out = f"{tmp}/tok-{mb:g}"
            row = {"mb": mb, "file_bytes": os.path.getsize(path)}
            row["biotok"] = measure([*biotok, "train", path, "--algo", "unigram", "--lower", "--vocab-size",
                                     str(args.vocab_size), "--out", out, "--force", "--quiet"])
            prov = Path(out, "biotok.json")
            if prov.is_file():
                import json

                notes = json.loads(prov.read_text(encoding="utf-8"))
                row["biotok_counts"] = notes.get("provenance", notes).get("backend_notes", {}).get("count_scaling")
            for b in baselines:
                code = (RAW_SPM if b == "sentencepiece" else RAW_HF).format(path=path, vocab=args.vocab_size)
                prior = [r[b] | {"mb": r["mb"]} for r in rows if b in r]
                guess = predict_rss(prior, mb)
                if guess is not None and guess / 1024 > min(LIMIT_GIB, available_gib() * 0.8):
                    row[b] = {"skipped": f"predicted peak RSS {guess / 1024:.1f} GiB does not fit "
                                         f"(limit {LIMIT_GIB:g} GiB, {available_gib():.1f} GiB available)"}
                else:
                    row[b] = measure([sys.executable, "-c", code], timeout=args.baseline_timeout)
            rows.append(row)
            print(f"{mb:g} MB: " + "; ".join(
                f"{k} " + (f"{v['seconds']:.1f} s, {v['tree_rss_mb']:.0f} MB" if "seconds" in v else v["skipped"])
                for k, v in row.items() if isinstance(v, dict) and ("seconds" in v or "skipped" in v)), flush=True)
        rss_ratio = rows[-1]["biotok"]["tree_rss_mb"] / rows[0]["biotok"]["tree_rss_mb"]
        print(f"biotok peak RSS (all processes) {sizes[-1]:g} MB / {sizes[0]:g} MB = {rss_ratio:.2f} "
              "(goal <= 1.5)", flush=True)

        if args.rows_only:
            print(f"-> {save(args.name, {'vocab_size': args.vocab_size, 'rows': rows, 'load_average': os.getloadavg(), 'rss_ratio_largest_over_smallest': rss_ratio})}")
            return
        scale_mb = args.scaling_size or sizes[len(sizes) // 2]
        scale_path = str(e3c_text(scale_mb))
        scaling = []
        for w in range(1, cores + 1):
            r = measure([*biotok, "count", scale_path, "--lower", "--workers", str(w), "--out", f"{tmp}/c{w}.tsv",
                         "--force", "--quiet"])
            scaling.append({"workers": w, **r})
            print(f"count {scale_mb:g} MB on {w} worker(s): {r['seconds']:.1f} s "
                  f"({scale_mb / r['seconds']:.1f} MB/s)", flush=True)
        same = len({Path(f"{tmp}/c{w}.tsv").read_bytes() for w in range(1, cores + 1)}) == 1
        per_core = {
            "biotok count --workers 1": measure([*biotok, "count", scale_path, "--lower", "--workers", "1",
                                                 "--out", f"{tmp}/c.tsv", "--force", "--quiet"]),
            "tokenizers BpeTrainer, 1 thread": measure([sys.executable, "-c", HF_COUNT.format(path=scale_path)],
                                                       env={"RAYON_NUM_THREADS": "1"}),
        }
        for k, v in per_core.items():
            v["mb_per_cpu_second"] = scale_mb / v["cpu_seconds"]
            print(f"{k}: {v['mb_per_cpu_second']:.2f} MB per CPU second", flush=True)
    result = {
        "vocab_size": args.vocab_size,
        "rows": rows,
        "rss_ratio_largest_over_smallest": rss_ratio,
        "worker_scaling": {"mb": scale_mb, "runs": scaling, "identical_counts": same},
        "counting_per_core": per_core,
        "goals": {"rss_ratio": "<= 1.5"},
    }
    print(f"-> {save(args.name, result)}")


if __name__ == "__main__":
    main()
