"""AliBERT's question on one GPU (issue 32): French vocabularies pretrained from scratch, and
does the laptop's verdict predict the downstream one? This is the pretraining text, the vocabularies,
the cheap instruments that each rank them, and the GPU ablation they are tested against.

    python -m benchmarks.experiments.ablation_gpu_fr              # the CPU side: rewrites docs/results/ablation-gpu-fr/
    python -m benchmarks.experiments.ablation_gpu_fr --gpu --engine ray --gpus-per-job 0.25   # the GPU side on one GPU machine (resumable)
    python -m benchmarks.experiments.ablation_gpu_fr --plan       # the GPU side's estimated minutes, per slot
    python -m benchmarks.experiments.ablation_gpu_fr --slots      # what is done, and the next GPU slot's command
    python -m benchmarks.experiments.ablation_gpu_fr --dry-run    # every job at toy size on a CPU (about 3 minutes on 2 cores)

On short GPU slots (a bare machine, 10 minutes a command, only small files back; see
benchmarks/README.md): ``--pack`` puts the text and vocabularies in .gpu/ beside
``../shared/gpu/pack.sh``'s; ``--slots`` says what the records here complete, estimates one
pretraining seed's slot from the measured costs and prints the next slot's device command;
``--slot SECONDS --archive FILE`` runs that slot there (one seed side by side on the GPU, its
archive rewritten after every job); ``--merge FILE...`` brings archives home, whole units only
(:mod:`biotok_train.ablate.slots`), and, once a pretraining seed is complete, writes the downstream
side of the page from the records alone.

Phases, each kept in benchmarks/.data/ablation_gpu_fr/ (a rerun skips what is done):
(1) text: E3C PAMJ clinical cases (a document a line), E3C drug leaflets cut into sentences and
de-duplicated, WMT-biomed French abstracts, CIM-10 labels; minus every line that is or contains
a dev or test sentence of the evaluated tasks (``benchmarks.corpora.pretraining_text``); each 20th
line held out, as ``ablate`` splits its corpus; (2) vocabularies trained on the pretraining part: biotok
Unigram_L 32k (lowercased), BPE 32k (cased), AliBERT's cased Unigram 32k, beside CamemBERTa's;
(3) the intrinsic metrics of ``biotok compare`` on the held-out part and the text's size in
pieces per vocabulary; (4) the causal-LM probe in fair mode, one seed after the other, the page
rewritten after each; (5) with --gpu, the GPU ablation over ``ablate`` (BERT-small from scratch
per vocabulary, 3 pretraining x 3 fine-tuning seeds, random-init floors, every French task), one
pretraining seed a GPU slot (``biotok_train.ablate.slots``), resumed job by job;
then each instrument's ranking against each task's (``biotok_train.predict``; the page:
``biotok_train.predict_report``).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

from benchmarks import corpora as C
from biotok import TrainConfig, train_tokenizer
from biotok.config import NormalizeConfig
from biotok.errors import BiotokError
from biotok.output import atomic_file
from biotok_train import predict_report as R
from biotok_train.ablate import estimate as E
from biotok_train.ablate import run_ablation
from biotok_train.ablate.keys import Key
from biotok_train.ablate import slots as S
from biotok_train.ablate import store as REC
from biotok_train.config import AblationConfig, EngineConfig, FinetuneConfig, ProbeConfig
from biotok_train.predict import intrinsic_metrics
from biotok_train.probe import run_probe
from biotok_train.tasks import get_task

WORK = Path(os.environ.get("BIOTOK_BENCH_CACHE", C.REPO / "benchmarks" / ".data"))
PUBLISHED = C.REPO / "docs" / "results" / "ablation-gpu-fr"
# the first GPU ablation: the plan's measured throughput (the committed copy of ../shared/gpu's: it travels to a GPU machine)
GPU_SUITE = C.REPO / "benchmarks" / "results" / "gpu" / C.GPU_SUITE_H200.name / "ablation.json"
TITLE = "AliBERT's question on one GPU: French vocabularies pretrained from scratch, and does the laptop predict the answer?"
HELDOUT_EVERY = 20  # ablate's split: the i-th line (from 1) is held out when i % 20 == 0
VOCABS = {"Unigram_L-32k": ("unigram", True), "BPE-32k": ("bpe", False), "Unigram-32k": ("unigram", False)}
PROBE = {"steps": 400, "batch_size": 8, "seq_len": 128, "hidden": 128, "heads": 2, "layers": 2, "lr": 2e-3}
# an evaluated sentence of fewer words (an answer option, a term, a header) removes only a line that is
# exactly it: at 1 word, "douleurs abdominales" (a FrenchMedMCQA option) removed 94 clinical cases
MIN_WORDS = 6
PROBE_CHARS = (4_000_000, 400_000)  # the probe's training and held-out samples (probe-fr: 3.1 M and 0.34 M)
# BERT-small from scratch, the same positions for every arm: 2 x the first GPU run's 24.6 M positions
# (which already left the plateau by far), 2-2.6 epochs of this text. Not more: a GPU slot's machine keeps
# nothing and its models cannot come back, so one pretraining seed (every vocabulary with its fine-tunes and
# floors) must fit one slot (--slots: 8.3 of 9 minutes on one H200, from the measured costs)
GPU = {"sizes": ("small",), "budget": 6000, "batch_size": 64, "seq_len": 128, "lr": 5e-4,
       "pretrain_seeds": (0, 1, 2), "seeds": (0, 1, 2)}
PACKED = 4  # fine-tunes sharing one GPU in the recipe's cost table (predict_report.plan_section)
SLOT_SECONDS = 540  # one command on the GPU machine: 10 minutes at most, less a minute for run.sh and a margin
# the GPU machine a slot is planned for (one H200, 16 cores): up to 8 GPU jobs at once, each asking 1/8 (the 4
# pretrainings side by side with 4 floors' fine-tunes, then 8 fine-tunes); the preparations share the cores
DEVICE = {"cores": 16, "share": 0.125}
# what the first slot's jobs cost on that machine (biotok_train.ablate.estimate.slot_costs of its two archives)
SLOT_COSTS = C.REPO / "benchmarks" / "results" / "gpu" / "h200-2026-11-28" / "costs.json"
# a dry run scores each fine-tune on the first 40 dev and test examples: whole sets made its 40
# toy fine-tunes about 21 CPU-s each, three quarters of the dry run
DRY_EVAL = 40
GPU_PACK = C.REPO / ".gpu"  # pack.sh's folder for a GPU machine (git-ignored); --pack adds ablation_gpu_fr[_dry]/
PACK_CORPORA = "wmt-biomed-fr-en edsnlp-fr-terminology quaero-frenchmed morfitt-fr frenchmedmcqa"  # for pack.sh


def build_text(work: Path, quick: bool) -> dict:
    """work/text/ (:func:`benchmarks.corpora.pretraining_text`); a text made with another
    MIN_WORDS is rebuilt, and what was made from it dropped: its probe samples included (they are
    written once, so a kept sample would score the probe on lines of the old text)."""
    if (work / "text" / "text.json").is_file():
        record = json.loads((work / "text" / "text.json").read_text(encoding="utf-8"))
        if record.get("min_words") == MIN_WORDS:
            return record
        for stale in ("text", "tokenizers", "probe", "intrinsic.json", "cpu_seconds.json"):
            shutil.rmtree(work / stale) if (work / stale).is_dir() else (work / stale).unlink(missing_ok=True)
    return C.pretraining_text(work / "text", C.french_pretraining_sources(200 if quick else None), C.FRENCH_TASKS,
                              min_words=MIN_WORDS, heldout_every=HELDOUT_EVERY)


def vocabularies(work: Path, quick: bool, train: bool = True) -> dict[str, str]:
    """name -> tokenizer folder: CamemBERTa's, and biotok's trained on the pretraining part
    (``train`` False: their paths only)."""
    size, out = 1000 if quick else 32000, {"camemberta-base": str(C.CAMEMBERTA)}
    for name, (algo, lower) in VOCABS.items():
        out[name] = str(path := work / "tokenizers" / name)
        if train and not (path / "tokenizer.json").is_file():
            cfg = TrainConfig(algo=algo, vocab_size=size, normalize=NormalizeConfig(lowercase=lower))
            print(f"ablation_gpu_fr: training {name} ({size:,} pieces)", file=sys.stderr)
            train_tokenizer([work / "text" / "pretrain.txt"], cfg, path, force=True, workers=1)
    return out


def intrinsic(work: Path, vocabs: dict[str, str]) -> dict:
    """work/intrinsic.json, made once (:func:`biotok_train.predict.intrinsic_metrics`)."""
    if (path := work / "intrinsic.json").is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    res = intrinsic_metrics(vocabs, work / "text" / "heldout.txt", work / "text" / "pretrain.txt")
    path.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return res


def probe(work: Path, vocabs: dict[str, str], seeds: tuple[int, ...], quick: bool) -> dict:
    """The probe in fair mode on every k-th line of the pretraining and held-out parts, on one torch
    thread (its numbers are byte-identical only at one thread count)."""
    train, held = (C.line_sample(work / "text" / f"{p}.txt", work / "text" / f"probe_{p}.txt", n)
                   for p, n in zip(("pretrain", "heldout"), PROBE_CHARS))
    sizes = {**PROBE, "steps": 30, "seq_len": 64, "hidden": 64} if quick else PROBE
    run_probe(ProbeConfig(tokenizers=tuple(vocabs.values()), corpus=(str(train),), heldout=(str(held),), seeds=seeds,
                          fair=True, n_resamples=300 if quick else 2000, threads=1, **sizes), work / "probe",
              progress=True)
    return json.loads((work / "probe" / "probe.json").read_text(encoding="utf-8"))


def gpu_config(work: Path, vocabs: dict[str, str], tasks: tuple[str, ...] | None = None) -> AblationConfig:
    """The GPU ablation's recipe (every vocabulary, every French task, random-init floors); with
    ``tasks``, at toy size for a CPU in a few minutes (``--dry-run``)."""
    cfg = AblationConfig(tokenizers=tuple(vocabs.values()), corpus=(str(work / "text" / "text.txt"),),
                         tasks=C.FRENCH_TASKS, data_dir=str(C.CORPORA), heldout_every=HELDOUT_EVERY, **GPU)
    return cfg if tasks is None else dataclasses.replace(
        cfg, tasks=tasks, sizes=("tiny",), budget=4, batch_size=2, seq_len=32, pretrain_seeds=(0,), seeds=(0,),
        n_words=50, n_resamples=200,
        finetune=FinetuneConfig(epochs=1, batch_size=4, max_length=64, max_steps=2, max_train_sentences=8,
                                 max_eval_examples=DRY_EVAL))


def gpu_side(work: Path, vocabs: dict[str, str], engine: EngineConfig, tasks: tuple[str, ...] | None,
             seeds: tuple[int, ...] | None = None) -> dict:
    """Run (or resume) the GPU ablation; its result with the comparisons of every pair of
    vocabularies (one run_ablation with ``pairs="all"``) and its costs. ``seeds``: over these
    pretraining seeds only (the slots merged so far). With force: the work folder is this
    recipe's, whose config.json may hold fewer seeds from an earlier merge."""
    cfg = gpu_config(work, vocabs, tasks)
    if seeds is not None:
        cfg = dataclasses.replace(cfg, pretrain_seeds=seeds)
    report = run_ablation(dataclasses.replace(cfg, pairs="all"), work / "gpu", engine=engine, force=True)
    result = json.loads(report.json_path.read_text(encoding="utf-8"))
    costs = json.loads(report.json_path.with_name("costs.json").read_text(encoding="utf-8"))
    return {**result, "costs": costs, "pretrain_seeds": list(cfg.pretrain_seeds), "pieces": REC.read_pieces(work / "gpu")}


def _need_text(work: Path) -> None:
    if not (work / "text" / "text.json").is_file():
        raise BiotokError(f"no pretraining text in {work / 'text'}: run the CPU side first (python -m "
                          "benchmarks.experiments.ablation_gpu_fr), or --pack it for a GPU machine")


def slot_plan(work: Path, cfg: AblationConfig, home: dict[str, str], precision: str | None,
              limit: float = SLOT_SECONDS) -> tuple[S.SlotPlan, list, dict, dict]:
    """The next slot of the GPU ablation ``cfg`` from the records ``home`` ({job key: content key}),
    estimated for the GPU machine (:data:`DEVICE`) from the measured costs (:data:`SLOT_COSTS`):
    the plan, the jobs, their content keys (``precision``: the models' arithmetic) and their seconds."""
    _need_text(work)
    jobs, keys = S.plan_jobs(cfg, precision)
    costs = json.loads(SLOT_COSTS.read_text(encoding="utf-8"))
    seconds = {j.key: E.job_seconds(costs, j.key, len(cfg.tokenizers), cfg.tokens_per_arm, DEVICE["cores"])
               for j in jobs}
    asks = {j.key: DEVICE["share"] if j.gpus > 0 else 0.0 for j in jobs}
    plan = S.plan_slot(jobs, keys, home, seconds, asks, 1.0, DEVICE["cores"], limit, E.STARTUP_S)
    return plan, jobs, keys, seconds


def _home_precision(work: Path, tasks: tuple[str, ...] | None) -> str | None:
    """The arithmetic of the records at home, or before any the GPU machine's (a dry run's: this machine's)."""
    return REC.recorded_precision(work / "gpu") or (None if tasks else "cuda:bf16")


def write_home(work: Path, home: dict[str, str]) -> str | None:
    """``home`` into .gpu/WORK/home.json for the next slot's machine (after --pack); its short sha256."""
    dest = GPU_PACK / work.name
    if not dest.is_dir():
        return None
    data = (json.dumps(home, indent=0, sort_keys=True) + "\n").encode("utf-8")
    with atomic_file(dest / S.HOME, force=True) as tmp:
        tmp.write_bytes(data)
    return hashlib.sha256(data).hexdigest()[:12]


def device_command(home_hash: str | None, tasks: tuple[str, ...] | None = None, limit: float = SLOT_SECONDS) -> str:
    """The command that runs the next slot on the GPU machine (``.gpu`` carried), its records into
    $OUT (``tasks``: the dry run's). The engine is the process pool: Ray's wheel (79 MB) cannot travel."""
    return ("bash .gpu/run.sh python -m benchmarks.experiments.ablation_gpu_fr "
            + (f"--dry-run --tasks {','.join(tasks)} " if tasks else "")
            + f"--slot {limit:g} " + (f"--home {home_hash} " if home_hash else "")
            + f"--archive \"$OUT/slot.tar.xz\" --engine processes --gpus-per-job {DEVICE['share']:g}")


def slots_section(work: Path, cfg: AblationConfig, tasks: tuple[str, ...] | None = None,
                  write: bool = True) -> list[str]:
    """What the records at home complete, the estimate of one seed's whole slot with its
    calculation, and the next slot's command with its estimate (``write``: home.json into .gpu)."""
    precision = _home_precision(work, tasks)
    home = S.home_records(work / "gpu")
    plan, jobs, keys, seconds = slot_plan(work, cfg, home, precision)
    home_hash = write_home(work, home) if write else None
    lines = estimate_lines(cfg, jobs, seconds)
    lines += ["", "What the records at home complete (a unit is a pretraining with every job that needs it, merged "
              "all or none: a unit cut in a slot is pretrained again by the next; other jobs merge one by one):", "",
              *S.status_lines(jobs, keys, home, cfg.pretrain_seeds), ""]
    if not plan.units:
        return lines + ["Every job of the GPU side has its record here.", ""]
    left = [u for u in plan.left if S.unit_seed(u) in (None, *plan.seeds)]
    lines += [f"Next slot: pretraining seed{'s' if len(plan.seeds) > 1 else ''} {', '.join(map(str, plan.seeds))}, "
              f"{len(plan.units)} units ({plan.jobs} jobs with the preparations they need), estimated "
              f"{plan.seconds:.0f} s of its {plan.limit_s:g} s"
              + (f"; it leaves {len(left)} units of that seed to the slot after ({_names(left)}): they do not fit"
                 if left else "") + ". On the GPU machine, with `.gpu` carried (`--pack` here once, then "
              "`--slots` or `--merge` here before each slot: they write `.gpu/" + work.name + "/home.json`), "
              "the run's timeout 600 s:", "", "    " + device_command(home_hash, tasks), "",
              "then here: `python -m benchmarks.experiments.ablation_gpu_fr" + (f" --dry-run --tasks {','.join(tasks)}"
                                                                                if tasks else "")
              + " --merge slot.tar.xz` (the archive from $OUT).", ""]
    if not write:
        lines += ["(`--slots` prints it with `--home SHA`: the records at home it was planned from, which it writes "
                  "into .gpu for the slot's machine.)", ""]
    elif home_hash is None:
        lines += ["(`.gpu/" + work.name + "/` does not exist yet: run pack.sh and `--pack` first; the command's "
                  "`--home` then names the records it was planned from.)", ""]
    return lines


def _names(us) -> str:
    kinds: dict[str, int] = {}
    for u in us:
        k = Key.parse(u.name)
        kind = "pretraining units" if u.model else k.kind + (" (floors)" if k.floor else "")
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in kinds.items())


def estimate_lines(cfg: AblationConfig, jobs: list, seconds: dict) -> list[str]:
    """Item 7 of issue 38: one pretraining seed's whole slot, job kind by job kind from the measured
    costs, simulated as the process engine runs it on the GPU machine, against the 9 minutes."""
    seed = cfg.pretrain_seeds[0]
    mine = S.select_seed(jobs, seed)
    costs = json.loads(SLOT_COSTS.read_text(encoding="utf-8"))
    kinds: dict[str, list[float]] = {}
    for j in mine:
        kind = (k := Key.parse(j.key)).kind + (" (floors)" if k.floor else "")
        kinds.setdefault(kind, []).append(seconds[j.key])
    asks = {j.key: DEVICE["share"] if j.gpus > 0 else 0.0 for j in mine}
    wall = S.simulate(mine, seconds, asks, 1.0, DEVICE["cores"]) + E.STARTUP_S
    rate = sum(costs["pretrain_positions"] / s for s in costs["pretrain_s"].values())
    prep = max(costs["prepare_s"].values())
    share = DEVICE["cores"] // len(cfg.tokenizers)
    lines = ["### One pretraining seed a slot: the estimate", "",
             f"A slot is one command on one H200 with {DEVICE['cores']} cores, at most {SLOT_SECONDS:g} s "
             "(10 minutes a command, less the minute run.sh and the margin take). It runs everything one pretraining "
             f"seed needs side by side: every vocabulary's preparation ({share} cores each), its pretraining (all "
             f"{len(cfg.tokenizers)} at once, each asking {DEVICE['share']:g} of the GPU), its held-out evaluation and "
             f"fine-tunes, and the seed's random-init floors (whose fine-tunes fill the GPU during the pretrainings); "
             f"at most {int(round(1 / DEVICE['share']))} GPU jobs at once. Each kind of job, from the first slot's "
             "measured cost records (`benchmarks/results/gpu/h200-2026-11-28/costs.json`, two pieces side by side on "
             "one H200):", "",
             "| job | count | seconds each | from |", "|---|---:|---:|---|"]
    why = {"prepare": f"{prep:.0f} s on one thread (the slowest measured) / {max(1.0, share * E.PREPARE_SPEEDUP_2_CORES / 2):.1f} "
                      f"({share} workers at {E.PREPARE_SPEEDUP_2_CORES:g}x per 2 cores: the parallel prepare's measured ratio, "
                      "benchmarks/results/prepare_speed.json)",
           "pretrain": f"{cfg.tokens_per_arm / 1e6:.1f} M positions each; the two measured side by side made "
                       f"{rate / 1e3:,.0f} k positions/s together, assumed shared by all {len(cfg.tokenizers)} "
                       "(CUDA graphs, +60-70 % alone, not counted)",
           "evaluate": "the slowest measured", "floor-model": f"{E.FLOOR_MODEL_S:g} s, an assumption (CPU, not measured)",
           "finetune": "each task's mean measured wall (4-8 fine-tunes and a pretraining on the GPU)",
           "finetune (floors)": "as the arms' (same task, model size and steps)"}
    for kind, secs in kinds.items():
        each = f"{min(secs):.0f}-{max(secs):.0f}" if max(secs) - min(secs) >= 0.5 else f"{secs[0]:.0f}"
        lines.append(f"| {kind} | {len(secs)} | {each} | {why.get(kind, '')} |")
    fits = wall <= SLOT_SECONDS
    lines += ["", f"Start-up {E.STARTUP_S:.0f} s (run.sh, imports, the text unpacked and split; the pieces' wall time "
              f"beyond their jobs was 15-21 s). Assumed, not measured: four pretrainings side by side get no more of "
              "the GPU than the two measured did, and the fine-tunes beside them slow them no more than the measured ones "
              "did (the first slot's cost records will tell: `--merge` keeps them, and costs.json can be made again from "
              f"its archive). Run as the process engine runs them: **pretraining seed {seed}'s whole "
              f"slot takes an estimated {wall:.0f} s = {wall / 60:.1f} minutes**, "
              + ("within the 9 minutes of one command." if fits else
                 f"more than the {SLOT_SECONDS / 60:g} minutes of one command. Cut, and why: a slot takes whole units "
                 "in order (the preparations, the pretraining units with their evaluations and fine-tunes, then the "
                 "floors' fine-tunes breadth-first, fine-tuning seed 0 of every task and arm before seed 1) while the "
                 "estimate fits, and leaves the rest of the seed to the next slot, which takes it first (below). Nothing "
                 "is dropped from the recipe: every floor keeps its 3 fine-tuning seeds and every task stays.")]
    return lines


def merge_archives(work: Path, archives: list[str], vocabs: dict[str, str], tasks: tuple[str, ...] | None) -> dict | None:
    """The slots' records into work/gpu, whole units only (a unit cut in its slot is left out and
    said); then, with every job of some pretraining seeds done, the GPU ablation's report over those
    seeds from the records alone. Before the CPU side: refused before anything is imported."""
    _need_text(work)
    cfg = gpu_config(work, vocabs, tasks)
    read = [(a, *S.archive_records(a)) for a in archives]  # every archive checked before any is imported
    for a, manifest, records in read:
        jobs, keys = S.plan_jobs(cfg, manifest.get("precision"))
        keep, part = S.merge_filter(jobs, keys, records)
        m = REC.import_records(a, work / "gpu", select=keep)
        kept = sum(1 for k in records if keep(k))
        print(f"ablation_gpu_fr: merged {a}: {kept} of {len(records)} records ({m.get('piece')}, {m.get('device')}, "
              f"{m.get('precision')})" + (f"; left out, incomplete (the next slot runs them again): "
                                          f"{', '.join(u.name for u in part)}" if part else ""), file=sys.stderr)
    print("\n".join(slots_section(work, cfg, tasks)))
    jobs, keys = S.plan_jobs(cfg, _home_precision(work, tasks))
    seeds = S.complete_seeds(jobs, keys, S.home_records(work / "gpu"), cfg.pretrain_seeds)
    if not seeds:
        return None
    return gpu_side(work, vocabs, EngineConfig(precision=REC.recorded_precision(work / "gpu")), tasks, seeds)


def plan_section(work: Path, vocabs: dict[str, str]) -> list[str]:
    """The GPU recipe's estimated GPU-minutes on one H100 from the GPU suite's measured throughput,
    then its slots: one seed's estimate with the calculation, what is done, the next command."""
    cfg, t = gpu_config(work, vocabs), E.measured_throughput(GPU_SUITE)
    rows = E.gpu_plan(cfg, E.task_sizes(cfg.tasks, str(C.CORPORA)), t["h100_positions_per_s"])
    legs = json.loads(GPU_SUITE.read_text(encoding="utf-8"))["steps"]["ablation"]["legs"]
    first = sum(leg["tokens_seen"] for leg in legs) / len(legs)
    return R.plan_section(cfg, t, rows, PACKED) + [
        f"Why this budget: {cfg.tokens_per_arm / first:.1f} x the positions per arm of the first GPU run "
        f"({first:,.0f}; its arms left the unigram plateau by far, `{t['source']}`), and one pretraining seed (every "
        "vocabulary, its fine-tunes and its floors) must fit one short GPU slot (below).", "",
        *slots_section(work, cfg, write=False)]


def pack(work: Path, vocabs: dict[str, str], dest: Path | None = None) -> Path:
    """``dest``: the pretraining text (xz) with its sha256, its text.json and the biotok vocabularies,
    for a GPU machine that receives only the checkout (next to pack.sh's wheels and task data)."""
    dest = dest or GPU_PACK / work.name
    if not (dest.parent / "run.sh").is_file():
        raise BiotokError(f"no {dest.parent / 'run.sh'}: run PACK_CORPORA='{PACK_CORPORA}' bash ../shared/gpu/pack.sh "
                          "from the checkout's root first (it empties .gpu/), then --pack")
    missing = [c for c in PACK_CORPORA.split() if not (dest.parent / "data" / "corpora" / c).is_dir()]
    if missing:
        raise BiotokError(f".gpu/data/corpora lacks {', '.join(missing)}: run PACK_CORPORA='{PACK_CORPORA}' "
                          "bash ../shared/gpu/pack.sh, then --pack")
    text = work / "text" / "text.txt"
    missing = [str(p) for p in (text, *(Path(vocabs[n]) / "tokenizer.json" for n in VOCABS)) if not p.is_file()]
    if missing:
        raise BiotokError(f"{missing[0]} is missing: run the CPU side first (python -m "
                          "benchmarks.experiments.ablation_gpu_fr)")
    if dest.is_dir():
        shutil.rmtree(dest)
    (dest / "tokenizers").mkdir(parents=True)
    (dest / "text.sha256").write_text(REC.pack_file(text, dest / "text.txt.xz") + "\n", encoding="utf-8")
    shutil.copyfile(work / "text" / "text.json", dest / "text.json")
    for name in VOCABS:
        shutil.copytree(vocabs[name], dest / "tokenizers" / name)
    return dest


def unpack(work: Path, src: Path | None = None) -> None:
    """On the GPU machine: work/text (text.txt checked against its sha256) and work/tokenizers from
    ``src`` (--pack's), unless already there."""
    src, text = src or GPU_PACK / work.name, work / "text" / "text.txt"
    if not text.is_file():
        if not (src / "text.txt.xz").is_file():
            raise BiotokError(f"neither {text} nor {src / 'text.txt.xz'}: run --pack where the CPU side ran, and "
                              "carry .gpu")
        text.parent.mkdir(parents=True, exist_ok=True)
        REC.unpack_file(src / "text.txt.xz", text, (src / "text.sha256").read_text(encoding="utf-8").split()[0])
        shutil.copyfile(src / "text.json", work / "text" / "text.json")
    for name in VOCABS:
        if not (work / "tokenizers" / name / "tokenizer.json").is_file() and (src / "tokenizers" / name).is_dir():
            shutil.copytree(src / "tokenizers" / name, work / "tokenizers" / name, dirs_exist_ok=True)


def run_slot(work: Path, limit: float, archive: Path, engine: EngineConfig, tasks: tuple[str, ...] | None,
             home_hash: str | None, started: float) -> dict:
    """On the GPU machine: the next slot (:func:`biotok_train.ablate.slots.run_slot`) from --pack's
    text and vocabularies and the records at home that --slots or --merge wrote into .gpu; its
    records into ``archive``, rewritten after every job. An archive it cannot write, or a home.json
    other than the command was printed for: refused before any work."""
    write = lambda m: REC.export_records(work / "gpu", archive, {"device": S.device_name(), **m})  # noqa: E731
    write({"piece": "slot starting", "slot": {"limit_s": limit}})
    path = GPU_PACK / work.name / S.HOME
    data = path.read_bytes() if path.is_file() else b"{}"
    if home_hash is not None and hashlib.sha256(data).hexdigest()[:12] != home_hash:
        raise BiotokError(f"{path} is not the one this command was planned from (--home {home_hash}): run --slots "
                          "where the records are, and carry .gpu again")
    unpack(work)
    cfg = gpu_config(work, vocabularies(work, tasks is not None, train=False), tasks)
    plan, jobs, keys, seconds = slot_plan(work, cfg, json.loads(data.decode("utf-8")), None, limit)
    print(f"ablation_gpu_fr: slot of {limit:g} s: pretraining seed(s) {', '.join(map(str, plan.seeds)) or 'none'}, "
          f"{len(plan.units)} units, {plan.jobs} jobs, estimated {plan.seconds:.0f} s", file=sys.stderr)
    engine = dataclasses.replace(engine, pretrain_gpus=engine.gpus_per_job)  # the pretrainings side by side
    return S.run_slot(cfg, work / "gpu", plan, engine, write, seconds, started)


def task_baselines(work: Path) -> dict[str, dict]:
    """work/baselines.json, made once: each French task's trivial baseline (the page shows it before
    the GPU run; afterwards the ablation's own, beside the arms)."""
    if (path := work / "baselines.json").is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    if not C.CORPORA.is_dir():  # no task data here: the page goes without the bar
        return {}
    from biotok_train.tasks import load  # lazy: the task readers
    from biotok_train.tasks.baseline import trivial_baseline

    res = {}
    for t in C.FRENCH_TASKS:
        b = trivial_baseline(load(t, C.CORPORA)).to_dict()
        res[t] = {k: b[k] for k in ("metric", "rule", "prediction", "train", "dev", "test")}
    path.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return res


def publish(dest: Path, command: str, text: dict, metrics: dict | None, probe_result: dict | None,
            vocabs: dict[str, str], work: Path, downstream: dict | None = None) -> None:
    """The page (:func:`biotok_train.predict_report.publish`), the GPU plan and its pieces while some
    pretraining seed has no downstream result."""
    partial = downstream is None or len(downstream.get("pretrain_seeds", GPU["pretrain_seeds"])) < len(GPU["pretrain_seeds"])
    plan = plan_section(work, vocabs) if partial and GPU_SUITE.is_file() else ()
    setup = R.PageSetup(TITLE, command, "benchmarks/.data/ablation_gpu_fr/", VOCABS, HELDOUT_EVERY,
                        GPU["budget"] * GPU["batch_size"] * GPU["seq_len"], plan,
                        task_baselines(work) if downstream is None else {})
    R.publish(dest, setup, text, metrics, probe_result, vocabs, work, downstream)


def run(work: Path, dest: Path, command: str, a: argparse.Namespace, engine: EngineConfig) -> None:
    """The phases in order, the page rewritten after each (``a.publish``: from what is finished only)."""
    text = R.timed_phase(work, "text", work / "text" / "text.json", build_text, work, a.dry_run)
    vocabs = R.timed_phase(work, "vocabularies", work / "tokenizers" / list(VOCABS)[-1] / "tokenizer.json",
                           vocabularies, work, a.dry_run)
    if a.publish:
        metrics, result = (json.loads((work / p).read_text(encoding="utf-8")) for p in ("intrinsic.json", "probe/probe.json"))
        gpu = work / "downstream.json"  # the GPU ablation with every pair compared (written by --gpu)
        downstream = json.loads(gpu.read_text(encoding="utf-8")) if gpu.is_file() else None
        publish(dest, command, text, metrics, result, vocabs, work, downstream)
        return
    result = probe(work, vocabs, tuple(a.seeds[:1]), a.dry_run)
    metrics = R.timed_phase(work, "intrinsic", work / "intrinsic.json", intrinsic, work, vocabs)
    publish(dest, command, text, metrics, result, vocabs, work)
    for i in range(1, 1 if a.dry_run else len(a.seeds)):  # a dry run: the first seed only
        result = probe(work, vocabs, tuple(a.seeds[:i + 1]), a.dry_run)
        publish(dest, command, text, metrics, result, vocabs, work)
    if a.gpu or a.dry_run:
        downstream = gpu_side(work, vocabs, engine, tuple(a.tasks.split(",")) if a.dry_run else None)
        (work / "downstream.json").write_text(json.dumps(downstream, indent=1) + "\n", encoding="utf-8")
        publish(dest, command, text, metrics, result, vocabs, work, downstream)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.experiments.ablation_gpu_fr", description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true",
                    help="every job at toy size on the CPU (a few minutes), into benchmarks/.data/ablation_gpu_fr_dry/")
    ap.add_argument("--gpu", action="store_true", help="also run (or resume) the GPU ablation, then the prediction test")
    ap.add_argument("--publish", action="store_true", help="only write the page from the phases already finished")
    ap.add_argument("--plan", action="store_true", help="only print the GPU recipe's estimated GPU-minutes")
    ap.add_argument("--slots", action="store_true",
                    help="what the slots merged here complete, one seed's estimate, and the next slot's device command")
    ap.add_argument("--pack", action="store_true",
                    help="put the text and the vocabularies in .gpu/ablation_gpu_fr/ for a GPU machine (after pack.sh)")
    ap.add_argument("--slot", metavar="SECONDS", type=float,
                    help="on the GPU machine: run the next slot (see --slots), starting no job that would not end in time")
    ap.add_argument("--home", metavar="SHA", help="with --slot: the home.json (in .gpu) the command was planned from")
    ap.add_argument("--archive", metavar="FILE", type=Path,
                    help="with --slot: where its job records go (.tar.xz), rewritten after every job")
    ap.add_argument("--merge", metavar="FILE", nargs="+", type=Path,
                    help="bring slots' archives home (whole units only); with every job of a pretraining seed done, "
                         "write the page")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="probe seeds, run one after the other")
    ap.add_argument("--tasks", default=",".join(C.FRENCH_TASKS), help="with --dry-run: the tasks to fine-tune")
    ap.add_argument("--engine", default="local", choices=("local", "ray", "processes"),
                    help="who runs the GPU side's jobs (biotok-train ablate --engine); processes where Ray is missing")
    ap.add_argument("--workers", type=int, default=0,
                    help="local: torch threads (0: one, as each worker of the other engines, so that records made "
                         "here and merged from a slot are the same bytes); ray, processes: jobs at a time "
                         "(0: one per CPU)")
    ap.add_argument("--gpus-per-job", type=float, default=0.0,
                    help="with --engine ray or processes: e.g. 0.25, four fine-tunes a GPU")
    a = ap.parse_args(argv)
    started = time.monotonic()
    if a.slot is None:  # a slot runs on a GPU machine with .gpu/data (pack.sh's), not the whole shared data
        C.require_data()
    work = WORK / ("ablation_gpu_fr_dry" if a.dry_run else "ablation_gpu_fr")
    dest = work / "page" if a.dry_run else PUBLISHED
    args = [x for x in (argv if argv is not None else sys.argv[1:]) if x != "--publish"]  # the page: what makes it
    command = " ".join(["python -m benchmarks.experiments.ablation_gpu_fr", *map(shlex.quote, args)])
    try:
        if a.plan:
            print("\n".join(plan_section(work, vocabularies(work, a.dry_run, train=False))))
            return 0
        for t in a.tasks.split(","):  # a task it cannot use is refused before any work
            get_task(t)
        workers = a.workers or (1 if a.engine == "local" else 0)  # float sums split over threads differ in bytes
        engine, tasks = EngineConfig(a.engine, workers, a.gpus_per_job), tuple(a.tasks.split(",")) if a.dry_run else None
        if a.slot is not None:
            if a.archive is None or a.slot <= 0:
                raise BiotokError("--slot SECONDS (> 0) needs --archive FILE (where its records go)")
            m = run_slot(work, a.slot, a.archive, engine, tasks, a.home, started)
            print(f"ablation_gpu_fr: {m['piece']}: {m['records']} records in {m['wall_s']:.0f} s on {m['device']}"
                  + (" (stopped early: no job left could end in time)" if m.get("stopped_early") else "")
                  + f" -> {a.archive}", file=sys.stderr)
            return 0
        if a.slots or a.pack or a.merge:
            vocabs = vocabularies(work, a.dry_run, train=False)
            if a.pack:
                print(f"ablation_gpu_fr: {pack(work, vocabs)}", file=sys.stderr)
            if a.merge:
                downstream = merge_archives(work, [str(x) for x in a.merge], vocabs, tasks)
                if downstream is not None:
                    (work / "downstream.json").write_text(json.dumps(downstream, indent=1) + "\n", encoding="utf-8")
                    a.publish = True
                    run(work, dest, "python -m benchmarks.experiments.ablation_gpu_fr" + (" --dry-run" if a.dry_run else "")
                        + " --merge slot-*.tar.xz   # the slots' archives (--slots says what is done)", a, engine)
                return 0
            _need_text(work)
            print("\n".join(slots_section(work, gpu_config(work, vocabs, tasks), tasks)))
            return 0
        run(work, dest, command, a, engine)
    except (BiotokError, OSError) as e:  # a bad input, a full or read-only disk: one line
        print(f"ablation_gpu_fr: error: {e}", file=sys.stderr)
        return 2
    print(f"ablation_gpu_fr: {dest / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
