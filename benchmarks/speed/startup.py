"""Start-up: ``biotok --help``, ``biotok-train --help`` and a one-sentence ``biotok-train fill-mask``,
this checkout against an earlier commit (``--before``, default main at 6e63c05, where issue 39
measured 13 s for fill-mask), with the floor beside them: the same fill-mask in plain
transformers (import torch and transformers, load the model and its tokenizer, one forward).

Each command runs in a fresh interpreter, the sides alternating (so drifting load hits them
alike), after one warm-up run each (bytecode cached, files in the page cache); wall and CPU
seconds (user + sys), best of ``--runs``. ``python -X importtime`` of each
fill-mask side gives the import seconds by top-level package. The model is a tiny BERT the
project's own commands make in a temporary folder (``biotok train``, ``biotok-train prepare``,
``biotok-train mlm --steps 2``), or ``--model DIR``.

    python -m benchmarks.speed.startup                  # writes results/startup.json
    python -m benchmarks.speed.startup --runs 1         # a smoke run
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from benchmarks._common import REPO, save

SENTENCE = "Le patient présente une <mask> aiguë."
FLOOR = """
import sys, torch
from transformers import AutoModelForMaskedLM, PreTrainedTokenizerFast
tok = PreTrainedTokenizerFast.from_pretrained(sys.argv[1])
model = AutoModelForMaskedLM.from_pretrained(sys.argv[1]).eval()
ids = tok(sys.argv[2].replace("<mask>", tok.mask_token), return_tensors="pt")
with torch.no_grad():
    logits = model(**ids).logits
print(tok.convert_ids_to_tokens(logits[0, ids["input_ids"][0] == tok.mask_token_id].topk(5).indices[0]))
"""


# Bytecode cached as on a user's machine (this one sets PYTHONDONTWRITEBYTECODE, which would make
# every run compile biotok's sources again): one cache folder, filled by a warm-up run per side.
PYCACHE = Path(tempfile.mkdtemp(prefix="biotok-startup-pycache-"))


def _env(code: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "PYTHONPYCACHEPREFIX": str(PYCACHE / code.name)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measured(args: list[str], code: Path) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of ``python ARGS`` run with ``code`` first on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=_env(code), cwd=tempfile.gettempdir(), check=True,
                   capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def import_seconds(args: list[str], code: Path, top: int = 12) -> dict:
    """Self import seconds by top-level package (``python -X importtime``), the largest first."""
    r = subprocess.run([sys.executable, "-X", "importtime", *args], env=_env(code), cwd=tempfile.gettempdir(),
                       check=True, capture_output=True, text=True)
    by = collections.Counter()
    for m in re.finditer(r"import time:\s+(\d+) \|\s+\d+ \| +(\S+)", r.stderr):
        by[m.group(2).split(".")[0]] += int(m.group(1))
    return {"total": round(sum(by.values()) / 1e6, 3),
            "by_package": {k: round(v / 1e6, 3) for k, v in by.most_common(top)}}


def tiny_model(folder: Path) -> Path:
    """A tiny BERT made by the project's commands (about a minute on a CPU)."""
    run = lambda *a: subprocess.run([sys.executable, *a], env=_env(REPO), check=True, capture_output=True)  # noqa: E731
    sample = REPO / "corpora" / "sample" / "e3c_pamj_fr.txt"
    lines = folder / "lines.txt"
    lines.write_text("\n".join(sample.read_text(encoding="utf-8").splitlines()[:2000]) + "\n", encoding="utf-8")
    run("-m", "biotok.cli", "train", str(sample), "--algo", "unigram", "--lower", "--vocab-size", "2000",
        "--out", str(folder / "tok"), "-q")
    run("-m", "biotok_train", "prepare", str(lines), "--tokenizer", str(folder / "tok"), "--seq-len", "64",
        "--out", str(folder / "data"))
    run("-m", "biotok_train", "mlm", str(folder / "data"), "--size", "tiny", "--steps", "2", "--batch-size", "4",
        "--out", str(folder / "model"))
    return folder / "model"


def checkout(rev: str, folder: Path) -> Path:
    """The code of ``rev`` (git archive) in ``folder``."""
    archive = subprocess.run(["git", "archive", rev, "biotok", "biotok_train"], cwd=REPO, check=True,
                             capture_output=True).stdout
    tar = folder / "code.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as t:
        t.extractall(folder / "code", filter="data")
    return folder / "code"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="6e63c05", help="the commit to compare with [6e63c05]")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", type=Path, help="a masked-LM folder (default: a tiny BERT made here)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="biotok-startup-") as tmp:
        tmp = Path(tmp)
        model = args.model or tiny_model(tmp)
        sides = {"before": checkout(args.before, tmp), "after": REPO}
        commands = {
            "biotok --help": ["-m", "biotok.cli", "--help"],
            "biotok-train --help": ["-m", "biotok_train", "--help"],
            "biotok-train fill-mask": ["-m", "biotok_train", "fill-mask", str(model), SENTENCE],
        }
        floor = ["-c", FLOOR, str(model), SENTENCE]
        for name, cmd in commands.items():  # warm-up: bytecode and the page cache, as after a first run
            for code in sides.values():
                measured(cmd, code)
        measured(floor, REPO)
        times: dict = {f"{side} | {name}": [] for name in commands for side in sides}
        times["floor | transformers fill-mask"] = []
        for _ in range(args.runs):
            for name, cmd in commands.items():
                for side, code in sides.items():
                    times[f"{side} | {name}"].append(measured(cmd, code))
            times["floor | transformers fill-mask"].append(measured(floor, REPO))
        best = {k: {"wall_s": round(min(w for w, _ in v), 3), "cpu_s": round(min(c for _, c in v), 3),
                    "runs": [[round(w, 3), round(c, 3)] for w, c in v]} for k, v in times.items()}
        imports = {side: import_seconds(commands["biotok-train fill-mask"], code) for side, code in sides.items()}
        imports["floor"] = import_seconds(floor, REPO)
    ratios = {name: {m: round(best[f"before | {name}"][m] / best[f"after | {name}"][m], 2) for m in ("wall_s", "cpu_s")}
              for name in commands}
    over_floor = {side: round(best[f"{side} | biotok-train fill-mask"]["cpu_s"]
                              / best["floor | transformers fill-mask"]["cpu_s"], 2) for side in sides}
    result = {"before": args.before, "runs": args.runs, "sentence": SENTENCE, "best": best,
              "before_over_after": ratios, "fill_mask_cpu_over_floor": over_floor, "import_seconds": imports}
    shutil.rmtree(PYCACHE, ignore_errors=True)
    path = save("startup", result)
    for k, v in best.items():
        print(f"{k:45s} wall {v['wall_s']:6.2f} s   cpu {v['cpu_s']:6.2f} s")
    for name, r in ratios.items():
        print(f"{name:30s} before/after: wall {r['wall_s']:.2f}x, cpu {r['cpu_s']:.2f}x")
    print(f"fill-mask CPU over plain transformers: before {over_floor['before']:.2f}x, after {over_floor['after']:.2f}x")
    print(f"-> {path}")


if __name__ == "__main__":
    main()
