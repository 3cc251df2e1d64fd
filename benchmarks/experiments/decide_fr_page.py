"""What benchmarks/experiments/decide_fr.py runs its steps with (each timed, the probe and the
ablation side by side) and docs/results/decide-fr/README.md, written from its work folder: the
inputs, the command a user types for each step with its measured wall and CPU seconds, and the
decision's own summary; every number is read from the files the steps wrote."""

from __future__ import annotations

import json
import os
import resource
import shutil
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, nullcontext
from multiprocessing import get_context
from pathlib import Path
from typing import Callable

HOUR_S = 3600
FLAGS = {"epochs": "--ft-epochs"}  # the config keys whose CLI option is not --KEY-WITH-DASHES


def options(settings: dict) -> str:
    """A step's settings as the CLI options that give them (``seeds=(0, 1)`` -> ``--seeds 0 1``)."""
    out = []
    for k, v in settings.items():
        flag = FLAGS.get(k, "--" + k.replace("_", "-"))
        out.append(f"{flag} {' '.join(map(str, v)) if isinstance(v, (tuple, list)) else v}")
    return " ".join(out)


def commands(cfg: dict, arms: tuple[str, ...]) -> dict[str, str]:
    """The command line of each step (what docs/evaluation.md tells a user to type), in the recipe's order."""
    toks = " ".join(a if not a.startswith("tok-") else a + "/" for a in arms)
    ev = "compare.json probe/ ablation/"
    return {
        "inputs": "your corpus.txt, heldout.txt and task/{train,dev,test}.conll; "
                  "awk 'NR % 4 == 0' heldout.txt > heldout-probe.txt",
        "train Unigram_L": f"biotok train corpus.txt --algo unigram --lower --vocab-size {cfg['vocab']} --out tok-unigram-l/",
        "train BPE": f"biotok train corpus.txt --algo bpe --vocab-size {cfg['vocab']} --out tok-bpe/",
        "compare": f"biotok compare {toks} --corpus heldout.txt --json > compare.json",
        "probe": f"biotok-train probe {toks} --corpus corpus.txt --heldout heldout-probe.txt --fair "
                 f"{options({**cfg['probe'], 'seeds': cfg['seeds']})} --pairs all --threads 1 --out probe/",
        "ablate": f"biotok-train ablate --tokenizers {toks} --corpus corpus.txt --task quaero=task/ "
                  f"{options({**cfg['ablate'], **cfg.get('ft', {})})} "
                  "--pairs all --out ablation/".replace("  ", " "),
        "decide": f"biotok decide {ev} --out decision.html",
        "report": f"biotok report {toks} --corpus heldout.txt "
                  + " ".join(f"--decide-from {e}" for e in ev.split()) + " --out report/",
    }


def cpu_seconds() -> float:
    """CPU seconds so far of this process and its finished children (what a step costs a free core)."""
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def run_steps(work: Path, groups: tuple[tuple[str, ...], ...], timed: Callable[[str, bool], dict], quick: bool) -> dict:
    """Run in ``work`` every step of ``groups`` not in its timings.json yet, a group's steps side by side
    (one process each), and keep each step's ``timed(name, quick)`` there as it ends."""
    from benchmarks.corpora import DATA, require_data, write_lines

    require_data()
    work.mkdir(parents=True, exist_ok=True)
    with _inside(work, DATA):
        done = json.loads(Path("timings.json").read_text(encoding="utf-8")) if Path("timings.json").is_file() else {}
        for group in groups:
            todo = [n for n in group if n not in done]
            side = ProcessPoolExecutor(len(todo), mp_context=get_context("spawn")) if len(todo) > 1 else nullcontext()
            with side as pool:
                got = pool.map(timed, todo, [quick] * len(todo)) if pool else [timed(n, quick) for n in todo]
                done.update({n: {**t, "side_by_side": len(todo) > 1} for n, t in zip(todo, got)})
            write_lines(Path("timings.json"), [json.dumps(done, indent=1)])
    return done


@contextmanager
def _inside(work: Path, data: Path):
    """In ``work``, with the shared data named for the steps (the alias camemberta, from any folder);
    the caller's folder and environment given back after (a test runs the recipe in its own process)."""
    cwd, before = Path.cwd(), os.environ.get("BIOTOK_SHARED_DATA")
    os.environ.setdefault("BIOTOK_SHARED_DATA", str(data))
    os.chdir(work)
    try:
        yield
    finally:
        os.chdir(cwd)
        if before is None:
            os.environ.pop("BIOTOK_SHARED_DATA", None)


def publish(work: Path, dest: Path, timings: dict, cfg: dict, arms: tuple[str, ...], script: str) -> Path:
    """The decision page (md, html, json), timings.json and README.md copied from ``work`` to ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in ("decision.md", "decision.html", "decision.json", "timings.json"):
        shutil.copyfile(Path(work) / f, dest / f)
    (dest / "README.md").write_text(readme(work, timings, cfg, arms, script), encoding="utf-8")
    return dest


def total_wall(timings: dict) -> float:
    """The scenario's wall seconds: the steps one after the other, the side-by-side ones counted once
    (the longest of them)."""
    alone = sum(t["wall_s"] for t in timings.values() if not t.get("side_by_side"))
    return alone + max((t["wall_s"] for t in timings.values() if t.get("side_by_side")), default=0.0)


def _minutes(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 60 else f"{s:.1f} s"


def _lines(path: Path) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def _sentences(path: Path) -> int:
    return path.read_text(encoding="utf-8").count("\n\n")


def readme(work: Path, timings: dict, cfg: dict, arms: tuple[str, ...], script: str) -> str:
    """The README of the published folder, from ``work``'s files and ``timings`` (step -> wall_s, cpu_s)."""
    work = Path(work)
    decision = json.loads((work / "decision.json").read_text(encoding="utf-8"))
    cmds = commands(cfg, arms)
    wall = total_wall(timings)
    cpu = sum(t["cpu_s"] for t in timings.values())
    corpus, held = work / "corpus.txt", work / "heldout.txt"
    task = {s: _sentences(work / "task" / f"{s}.conll") for s in ("train", "dev", "test")}
    out = ["# From your data to a decision: a French corpus, QUAERO CoNLL files and three vocabularies", "",
           f"Regenerate: `{script}` (about {_minutes(cpu)} of CPU, one thread a process: "
           "`OMP_NUM_THREADS=1 nice python -m ...`). It runs the steps of "
           "[docs/evaluation.md](../../evaluation.md#from-your-data-to-a-decision) in benchmarks/.data/decide_fr/, one after "
           "the other but the probe and the ablation, which run side by side (a rerun skips the finished steps), "
           "and writes this folder.", "",
           "## The inputs", "",
           f"- `corpus.txt`: {_lines(corpus):,} lines, {corpus.stat().st_size / 1e6:.2f} MB: the LabForSIMS French "
           "doctor-patient dialogue turns (CC BY-SA 4.0), then the French side of the WMT-biomed training abstracts "
           "(MEDLINE, SciELO, EDP), one plain file;",
           f"- `heldout.txt`: {_lines(held):,} lines ({held.stat().st_size / 1e6:.2f} MB), each 10th line of the two, "
           f"never trained on; the probe scores each 4th of them, `heldout-probe.txt` ({_lines(work / 'heldout-probe.txt'):,} "
           "lines);",
           f"- `task/{{train,dev,test}}.conll`: QUAERO French Medical (MEDLINE titles and EMEA leaflets, GFDL), "
           f"biotok's conversion (outermost entity), `token<TAB>tag`: {task['train']:,} / {task['dev']:,} / "
           f"{task['test']:,} sentences;",
           f"- the vocabularies: CamemBERTa-base's (32k, `camemberta`), and a biotok Unigram_L and a biotok BPE of "
           f"{cfg['vocab']:,} pieces trained on `corpus.txt`.", "",
           "## The steps", "",
           "Measured on this machine by the command above, each step in the run that finished it. CPU seconds are the step's process's and "
           "its children's: what it costs a free core. Wall seconds include the waits of a machine shared with "
           "other jobs. The steps marked *side by side* ran at once, one process (one core) each, and the total "
           "wall time counts the longest of them.", "",
           "| step | command | wall | CPU |", "|---|---|---:|---:|"]
    for name, t in timings.items():
        side = " (*side by side*)" if t.get("side_by_side") else ""
        out.append(f"| {name}{side} | `{cmds.get(name, name)}` | {_minutes(t['wall_s'])} | {_minutes(t['cpu_s'])} |")
    out.append(f"| **total** | | **{_minutes(wall)}** | **{_minutes(cpu)}** |")
    side = sum(t["cpu_s"] for t in timings.values() if t.get("side_by_side"))
    free = cpu - side + max((t["cpu_s"] for t in timings.values() if t.get("side_by_side")), default=0.0)
    out += ["", f"The whole scenario cost {_minutes(cpu)} of CPU; on 2 free cores (the side-by-side steps on one "
                f"core each) that is about {_minutes(free)} of wall-clock time, "
                f"{'within' if free < HOUR_S else 'over'} the hour. Here, on a machine shared with other jobs, it "
                f"took {_minutes(wall)}.", "",
            "## The decision", "", decision["summary"], "",
            "The full page: [decision.md](decision.md) (also [decision.html](decision.html), self-contained). "
            f"Its {len(decision['findings'])} comparisons, {sum(not f['kept'] for f in decision['findings'])} of "
            "them discarded with their reasons, and the cost of the runs that would settle it are computed from "
            "the evidence files by `biotok decide`.", ""]
    return "\n".join(out)


__all__ = ["commands", "cpu_seconds", "options", "publish", "readme", "run_steps", "total_wall"]
