"""The speed checks of one short GPU slot (issue 38, item 4): where a BERT-small step goes.

    bash .gpu/run.sh python -m benchmarks.speed.gpu_suite.slot_speed --out "$OUT"     # ~4 min on one H200
    python -m benchmarks.speed.gpu_suite.slot_speed --dry-run --out /tmp/slot         # toy size, CPU, ~1 min

On the E3C PAMJ clinical cases with CamemBERTa's vocabulary (as the 2026-11-28 run), batch 64 x 128,
each run a ``biotok-train`` process of its own, alone on the GPU, one after the other:

1. BERT-small MLM, ``--steps`` steps each: eager, compiled (default mode), CUDA graphs
   (``reduce-overhead``: what the ablation's ``compile_mode="auto"`` now picks);
2. a ``torch.profiler`` summary of the compiled step (default mode: its kernels one by one; then
   of the CUDA-graphs step, last, if time is left): step time, the GPU's busy share, the top
   operators by device time (:func:`benchmarks.speed.gpu_suite.profile.profile_mode`);
3. ELECTRA-small compiled (default mode), then with CUDA graphs: the 1 % MFU is a launch-bound
   step (24 thin layers, :mod:`benchmarks.speed.electra_cost`), which graphs should lift;
4. an ablation fine-tune's phases on the GPU (E3C, the model of run 1, two seeds in one process:
   imports, model load, encoding, training, evaluation; :mod:`benchmarks.speed.finetune_startup`),
   against the 7-30 s each took in the 2026-11-28 pieces.

Per run: tokens/s and MFU of the ``metrics.jsonl`` rows after the first (compilation), the wall
time, and the seconds between its summary line and its exit. The 2026-11-28 ELECTRA process did
not exit after its last line (a finished compiled run now stops torch.compile's worker pool itself,
killing it after 10 s: :func:`biotok_train.pretrain.compiled.release_compile_workers`): a process still alive ``--exit-grace`` seconds after its summary gets
SIGABRT, and Python's faulthandler (``PYTHONFAULTHANDLER=1``) prints where every thread waits, kept
in the JSON. A part that would not fit in what is left of ``--minutes`` (by the 2026-11-28 times) is
skipped, and said. Writes two small files into ``--out``: ``slot_speed.json`` (rewritten after each
part, so a run cut at its limit keeps what it measured) and ``slot_speed.txt`` (the tables).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks import corpora as C

SCHEMA = "biotok-slot-speed/1"
# seconds each part took (2026-11-28, one H200: start-up + compilation + 150 steps; profile ~ a compiled run)
# (the 2026-11-28 rows: compilation ~18 s for BERT-small, ~60 s for ELECTRA-small; ~10 s of imports a process)
ESTIMATE_S = {"data": 20, "mlm-eager": 20, "mlm-compile": 35, "mlm-graphs": 35, "profile-compile": 40,
              "electra-compile": 80, "finetune-e3c": 60, "electra-graphs": 80, "profile-graphs": 40}


@dataclass(frozen=True)
class Part:
    """One measured run: a pretraining command (``objective`` with a compile mode) or a profile."""

    name: str
    objective: str = "mlm"  # mlm | electra | profile | finetune
    mode: str | None = None  # None: eager; else the torch.compile mode


PARTS = (Part("mlm-eager"), Part("mlm-compile", mode="default"), Part("mlm-graphs", mode="reduce-overhead"),
         Part("profile-compile", "profile", "default"), Part("electra-compile", "electra", "default"),
         Part("finetune-e3c", "finetune"), Part("electra-graphs", "electra", "reduce-overhead"),
         Part("profile-graphs", "profile", "reduce-overhead"))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.speed.gpu_suite.slot_speed", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder for slot_speed.json and slot_speed.txt ($OUT on the GPU machine)")
    p.add_argument("--dry-run", action="store_true", help="toy size on the CPU, every run eager: the plumbing only")
    p.add_argument("--steps", type=int, default=150, help="steps per pretraining run (rows every 25)")
    p.add_argument("--minutes", type=float, default=4.0, help="budget: a part that would not fit is skipped")
    p.add_argument("--exit-grace", type=float, default=30.0, help="seconds a run may take to exit after its summary")
    p.add_argument("--only", default=",".join(x.name for x in PARTS), help="comma-separated parts, in their order")
    p.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    p.add_argument("--profile-run", nargs=3, metavar=("DATA", "MODE", "JSON"), help=argparse.SUPPRESS)  # the child
    return p


# --- data ------------------------------------------------------------------------------------
def prepare_data(work: Path, dry_run: bool) -> Path:
    """The packed data: PAMJ with CamemBERTa's vocabulary at 128 (dry run: the repo's sample with a
    small WordPiece trained on it, at 32)."""
    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.prepare import prepare

    text = work / "corpus.txt"
    if dry_run:
        from biotok.config import TrainConfig
        from biotok.train import train_tokenizer

        text.write_text(C.SAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
        tokenizer = work / "tok"
        train_tokenizer([text], TrainConfig(algo="wordpiece", vocab_size=800), tokenizer)
    else:
        if not C.PAMJ.is_file():  # pack.sh copies it (no MANIFEST.md: require_data would refuse .gpu/data)
            raise SystemExit(f"slot_speed: error: {C.PAMJ} not found (run from the checkout with .gpu carried)")
        text.write_text("\n".join(C.pamj_documents()) + "\n", encoding="utf-8")
        tokenizer = C.CAMEMBERTA
    seq = 32 if dry_run else 128
    return prepare([str(text)], str(tokenizer), PrepareConfig(seq_len=seq), work / "data", progress=False).path


# --- one pretraining process -------------------------------------------------------------------
def command(part: Part, data: Path, out: Path, steps: int, dry_run: bool) -> list[str]:
    """The ``biotok-train`` command of a pretraining part (dry run: tiny, eager, on the CPU)."""
    cmd = [sys.executable, "-m", "biotok_train", part.objective, str(data), "--size", "tiny" if dry_run else "small",
           "--batch-size", "4" if dry_run else "64", "--steps", str(steps), "--log-every", str(max(1, min(25, steps // 3))),
           "--seed", "0", "--out", str(out), "--report-to", "none", "--no-progress"]
    if dry_run:
        return cmd + ["--no-compile", "--device", "cpu"]
    return cmd + (["--no-compile"] if part.mode is None else ["--compile", "--compile-mode", part.mode])


def watched(cmd: list[str], limit_s: float, grace_s: float, summary: str) -> dict:
    """Run ``cmd``; its wall time, exit code and the seconds from the stdout line containing
    ``summary`` to its exit. Still alive ``grace_s`` after that line (or at ``limit_s``): SIGABRT
    (faulthandler prints every thread's stack), then SIGKILL; the stderr tail is kept."""
    env = {**os.environ, "PYTHONFAULTHANDLER": "1", "PYTHONUNBUFFERED": "1"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen: dict = {}
    out_lines: list[str] = []
    err: list[str] = []

    def read_out() -> None:
        for line in proc.stdout:
            out_lines.append(line.rstrip("\n"))
            if summary in line and "at" not in seen:
                seen["at"] = time.perf_counter()

    def read_err() -> None:
        for line in proc.stderr:
            err.append(line)
            del err[:-200]

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for r in readers:
        r.start()
    hung = None
    while proc.poll() is None:
        now = time.perf_counter()
        if ("at" in seen and now - seen["at"] > grace_s) or now - t0 > limit_s:
            hung = "after its summary line" if "at" in seen else f"at the {limit_s:.0f} s limit"
            proc.send_signal(signal.SIGABRT)  # faulthandler: every thread's Python stack on stderr
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
            break
        time.sleep(0.2)
    proc.wait()
    for r in readers:
        r.join(5)
    end = time.perf_counter()
    row = {"wall_s": round(end - t0, 1), "returncode": proc.returncode, "stdout_tail": out_lines[-3:]}
    row["exit_after_summary_s"] = round(end - seen["at"], 1) if "at" in seen else None
    if hung or proc.returncode != 0:
        row["hung"] = hung
    # a pool killed at the end says so on stderr (biotok_train.pretrain.compiled.release_compile_workers)
    row["stderr_tail"] = "".join(err)[-4000 if hung or proc.returncode else -800:]
    return row


def rows_summary(metrics: Path) -> dict:
    """tokens/s and MFU of the metrics.jsonl rows after the first (which holds the compilation)."""
    rows = [json.loads(x) for x in metrics.read_text(encoding="utf-8").splitlines() if x.strip()] if metrics.is_file() else []
    steady = rows[1:] or rows
    tps = [r["tokens_per_s"] for r in steady]
    mfu = [r["mfu"] for r in steady if r.get("mfu") is not None]
    return {"rows": len(rows), "graphs": rows[-1].get("graphs") if rows else None,
            "tokens_per_s": [round(x) for x in tps], "tokens_per_s_median": round(statistics.median(tps)) if tps else None,
            "mfu_median": round(statistics.median(mfu), 4) if mfu else None,
            "last_loss": round(rows[-1]["loss"], 4) if rows else None}


# --- the profile (a child process of its own) ---------------------------------------------------
def profile_child(data: str, mode: str, out_json: str) -> int:
    """Profile the loop's step at the ablation's shape (``mode``: a compile mode, or "eager")."""
    import torch

    from benchmarks.speed.gpu_suite.config import SuiteConfig
    from benchmarks.speed.gpu_suite.profile import profile_mode

    cuda = torch.cuda.is_available()
    cfg = SuiteConfig(dry_run=not cuda, compile_mode=mode if mode != "eager" else "default",
                      ablation_size="small" if cuda else "tiny", ablation_batch_size=64 if cuda else 4,
                      ablation_seq_len=128 if cuda else 32, profile_steps=10 if cuda else 2)
    with tempfile.TemporaryDirectory() as work:
        r = profile_mode(cfg, Path(data), torch.device("cuda" if cuda else "cpu"), Path(work), mode != "eager")
    r["mode"] = mode
    Path(out_json).write_text(json.dumps(r) + "\n", encoding="utf-8")
    print("profile done", flush=True)
    return 0


def run_finetune(data_model: Path, work: Path, dry_run: bool, limit_s: float, grace_s: float) -> dict:
    """:mod:`benchmarks.speed.finetune_startup` on E3C with the eager MLM run's model, two seeds."""
    if not (data_model / "config.json").is_file():
        return {"skipped": f"no model in {data_model.name} (its run was skipped or failed)"}
    if not C.CORPORA.is_dir():
        return {"skipped": f"no task data: {C.CORPORA} not found"}
    out = work / "finetune-e3c.json"
    cmd = [sys.executable, "-m", "benchmarks.speed.finetune_startup", "--model", str(data_model), "--tasks", "e3c",
           "--seeds", "0,1", "--out", str(out)] + (["--quick"] if dry_run else ["--steps", "0"])
    row = watched(cmd, limit_s, grace_s, '"task": "e3c"')
    if out.is_file():
        r = json.loads(out.read_text(encoding="utf-8"))
        row.update(imports_s=r["imports_s"], **{k: r["tasks"][0][k] for k in ("examples", "load_task_s", "summary")},
                   seconds=[x["seconds"] for x in r["tasks"][0]["seeds"]])
    return row


def run_profile(part: Part, data: Path, work: Path, dry_run: bool, limit_s: float, grace_s: float) -> dict:
    out = work / f"{part.name}.json"
    mode = "eager" if dry_run else part.mode
    row = watched([sys.executable, "-m", "benchmarks.speed.gpu_suite.slot_speed", "--out", str(work),
                   "--profile-run", str(data), mode, str(out)], limit_s, grace_s, "profile done")
    if out.is_file():
        row.update(json.loads(out.read_text(encoding="utf-8")))
    return row


# --- the slot ------------------------------------------------------------------------------------
def text_report(result: dict) -> str:
    lines = [f"slot speed ({'dry run, ' if result['dry_run'] else ''}{result['device']}), {result['steps']} steps a run",
             "", "| run | tokens/s (median of rows after the first) | MFU | wall s | exit after summary s |",
             "|---|---|---|---|---|"]
    for name, r in result["runs"].items():
        if "tokens_per_s_median" in r:
            mfu = f"{100 * r['mfu_median']:.1f} %" if r.get("mfu_median") is not None else "n/a"
            lines.append(f"| {name} | {r['tokens_per_s_median']} | {mfu} | {r['wall_s']} | {r['exit_after_summary_s']} |"
                         + (f" HUNG {r['hung']}" if r.get("hung") else ""))
    for name, r in result["runs"].items():
        if "summary" in r:
            lines += ["", f"{name}: imports {r['imports_s']} s, task loaded in {r['load_task_s']} s; per seed: "
                          + json.dumps(r["summary"])]
    for name, r in result["runs"].items():
        if "table" in r:
            busy = r.get("gpu_busy_fraction")
            lines += ["", f"{name}: step {r['step_ms_median']:.2f} ms median, GPU busy "
                          f"{'n/a' if busy is None else f'{100 * busy:.0f} %'}", r["table"]]
    lines += ["", "skipped: " + (", ".join(f"{s['part']} ({s['why']})" for s in result["skipped"]) or "nothing")]
    return "\n".join(lines) + "\n"


def write(out: Path, result: dict) -> None:
    """slot_speed.json (without the profile tables) and slot_speed.txt, each written whole then renamed."""
    slim = {**result, "runs": {k: {kk: vv for kk, vv in v.items() if kk != "table"} for k, v in result["runs"].items()}}
    for name, text in (("slot_speed.json", json.dumps(slim, indent=1) + "\n"), ("slot_speed.txt", text_report(result))):
        tmp = out / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out / name)


def run_slot(out: Path, dry_run: bool, steps: int, minutes: float, grace_s: float, only: list[str],
             work: Path) -> dict:
    import torch

    t0 = time.perf_counter()
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    if not dry_run and device == "cpu":
        raise SystemExit("slot_speed: error: no CUDA device (use --dry-run on a CPU)")
    result = {"schema": SCHEMA, "dry_run": dry_run, "device": device, "steps": steps, "versions":
              {"torch": torch.__version__, "python": sys.version.split()[0]}, "runs": {}, "skipped": []}
    data = prepare_data(work, dry_run)
    result["data_s"] = round(time.perf_counter() - t0, 1)
    for part in (p for p in PARTS if p.name in only):
        left = minutes * 60 - (time.perf_counter() - t0)
        if not dry_run and ESTIMATE_S[part.name] > left:
            result["skipped"].append({"part": part.name, "why": f"{ESTIMATE_S[part.name]} s estimated, {left:.0f} s left"})
            continue
        limit = max(60.0, min(left, 3 * ESTIMATE_S[part.name])) if not dry_run else 600.0
        if part.objective == "profile":
            row = run_profile(part, data, work, dry_run, limit, grace_s)
        elif part.objective == "finetune":
            row = run_finetune(work / "mlm-eager", work, dry_run, limit, grace_s)
            if "skipped" in row:
                result["skipped"].append({"part": part.name, "why": row["skipped"]})
                continue
        else:
            run_dir = work / part.name
            row = watched(command(part, data, run_dir, steps, dry_run), limit, grace_s, "tokens/s")
            row.update(rows_summary(run_dir / "metrics.jsonl"))
        row["mode"] = "eager" if dry_run or part.mode is None else part.mode
        result["runs"][part.name] = row
        result["wall_s"] = round(time.perf_counter() - t0, 1)
        write(out, result)
    write(out, result)
    return result


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.profile_run:
        return profile_child(*args.profile_run)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = [x for x in args.only.split(",") if x]
    unknown = [x for x in only if x not in ESTIMATE_S or x == "data"]
    if unknown:
        print(f"slot_speed: error: unknown part {unknown[0]!r} (choose from {', '.join(p.name for p in PARTS)})",
              file=sys.stderr)
        return 2
    steps = min(args.steps, 3) if args.dry_run else args.steps
    if args.work:
        result = run_slot(out, args.dry_run, steps, args.minutes, args.exit_grace, only, Path(args.work))
    else:
        with tempfile.TemporaryDirectory(prefix="slot-speed-") as work:
            result = run_slot(out, args.dry_run, steps, args.minutes, args.exit_grace, only, Path(work))
    print(text_report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
