"""docs/results/decide-fr/README.md from the work folder of benchmarks/experiments/decide_fr.py: the
inputs, the command a user types for each step with its measured wall and CPU seconds, and the
decision's own summary; every number is read from the files the steps wrote."""

from __future__ import annotations

import json
from pathlib import Path

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
        "inputs": "your corpus.txt, heldout.txt and task/{train,dev,test}.conll",
        "train Unigram_L": f"biotok train corpus.txt --algo unigram --lower --vocab-size {cfg['vocab']} --out tok-unigram-l/",
        "train BPE": f"biotok train corpus.txt --algo bpe --vocab-size {cfg['vocab']} --out tok-bpe/",
        "compare": f"biotok compare {toks} --corpus heldout.txt --json > compare.json",
        "probe": f"biotok-train probe {toks} --corpus corpus.txt --heldout heldout.txt --fair "
                 f"{options({**cfg['probe'], 'seeds': cfg['seeds']})} --pairs all --threads 1 --out probe/",
        "ablate": f"biotok-train ablate --tokenizers {toks} --corpus corpus.txt --task quaero=task/ "
                  f"{options(cfg['ablate'])} --pairs all --out ablation/".replace("  ", " "),
        "decide": f"biotok decide {ev} --out decision.html",
        "report": f"biotok report {toks} --corpus heldout.txt "
                  + " ".join(f"--decide-from {e}" for e in ev.split()) + " --out report/",
    }


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
    wall = sum(t["wall_s"] for t in timings.values())
    cpu = sum(t["cpu_s"] for t in timings.values())
    corpus, held = work / "corpus.txt", work / "heldout.txt"
    task = {s: _sentences(work / "task" / f"{s}.conll") for s in ("train", "dev", "test")}
    out = ["# From your data to a decision: a French corpus, QUAERO CoNLL files and three vocabularies", "",
           f"Regenerate: `{script}` (about {_minutes(cpu)} of CPU, one thread a process: "
           "`OMP_NUM_THREADS=1 nice python -m ...`). It runs the steps of "
           "[docs/evaluation.md](../../evaluation.md#from-your-data-to-a-decision) one after the other in "
           "benchmarks/.data/decide_fr/ (a rerun skips the finished steps) and writes this folder.", "",
           "## The inputs", "",
           f"- `corpus.txt`: {_lines(corpus):,} lines, {corpus.stat().st_size / 1e6:.2f} MB: the LabForSIMS French "
           "doctor-patient dialogue turns (CC BY-SA 4.0), then the French side of the WMT-biomed training abstracts "
           "(MEDLINE, SciELO, EDP), one plain file;",
           f"- `heldout.txt`: {_lines(held):,} lines ({held.stat().st_size / 1e6:.2f} MB), each 10th line of the two, "
           "never trained on;",
           f"- `task/{{train,dev,test}}.conll`: QUAERO French Medical (MEDLINE titles and EMEA leaflets, GFDL), "
           f"biotok's conversion (outermost entity), `token<TAB>tag`: {task['train']:,} / {task['dev']:,} / "
           f"{task['test']:,} sentences;",
           f"- the vocabularies: CamemBERTa-base's (32k, `camemberta`), and a biotok Unigram_L and a biotok BPE of "
           f"{cfg['vocab']:,} pieces trained on `corpus.txt`.", "",
           "## The steps", "",
           "Measured on this machine in one run of the command above; CPU seconds are this process's and its "
           "children's (what the step costs a free core), wall seconds include the waits of a machine "
           "shared with other jobs.", "",
           "| step | command | wall | CPU |", "|---|---|---:|---:|"]
    for name, t in timings.items():
        out.append(f"| {name} | `{cmds.get(name, name)}` | {_minutes(t['wall_s'])} | {_minutes(t['cpu_s'])} |")
    out.append(f"| **total** | | **{_minutes(wall)}** | **{_minutes(cpu)}** |")
    within = "within" if cpu < HOUR_S else "over"
    out += ["", f"The whole scenario cost {_minutes(cpu)} of CPU ({within} the hour on 2 cores) and "
                f"{_minutes(wall)} of wall-clock time here.", "",
            "## The decision", "", decision["summary"], "",
            "The full page: [decision.md](decision.md) (also [decision.html](decision.html), self-contained). "
            f"Its {len(decision['findings'])} comparisons, {sum(not f['kept'] for f in decision['findings'])} of "
            "them discarded with their reasons, and the cost of the runs that would settle it are computed from "
            "the evidence files by `biotok decide`.", ""]
    return "\n".join(out)


__all__ = ["commands", "options", "readme"]
