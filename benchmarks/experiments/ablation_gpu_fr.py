"""AliBERT's question on one GPU (issue 32): French vocabularies from scratch; does the laptop's verdict predict the GPU's?
Without options, the CPU side (rewrites docs/results/ablation-gpu-fr/); the others, slots included: biotok_train.ablate.
experiment. Phases, in benchmarks/.data/ablation_gpu_fr/: (1) text: E3C PAMJ cases, E3C leaflets, WMT-biomed French
abstracts, CIM-10 labels, less every line that is or holds a task's dev or test sentence, each 20th line held out; (2)
biotok Unigram_L 32k (lowercased), BPE 32k, AliBERT's Unigram 32k trained on it, beside CamemBERTa's; (3) intrinsic
metrics; (4) the causal-LM probe (fair), seed after seed; (5) the GPU ablation (BERT-small, 3 x 3 seeds, floors, every
French task); then each instrument's ranking against each task's (biotok_train.predict; the page: ablation_gpu_fr_page)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from pathlib import Path

from benchmarks import corpora as C
from biotok import TrainConfig, train_tokenizer
from biotok.config import NormalizeConfig
from benchmarks.experiments import ablation_gpu_fr_page as R
from biotok_train.ablate import AblationConfig, Finetuning, Pretraining, Statistics, estimate as E, experiment as X
from biotok_train.config import FinetuneConfig, ProbeConfig
from biotok_train.predict import intrinsic_metrics
from biotok_train.probe import run_probe

WORK = Path(os.environ.get("BIOTOK_BENCH_CACHE", C.REPO / "benchmarks" / ".data"))
GPU_PACK = C.REPO / ".gpu"  # pack.sh's folder for a GPU machine (git-ignored); --pack adds ablation_gpu_fr[_dry]/
GPU_SUITE = C.REPO / "benchmarks" / "results" / "gpu" / C.GPU_SUITE_H200.name / "ablation.json"  # the plan's throughput
HELDOUT_EVERY = 20  # ablate's split: the i-th line (from 1) is held out when i % 20 == 0
VOCABS = {"Unigram_L-32k": ("unigram", True), "BPE-32k": ("bpe", False), "Unigram-32k": ("unigram", False)}
PROBE = {"steps": 400, "batch_size": 8, "seq_len": 128, "hidden": 128, "heads": 2, "layers": 2, "lr": 2e-3}
MIN_WORDS = 6  # a shorter evaluated sentence removes only a line that is exactly it (at 1 word, 94 clinical cases went)
PROBE_CHARS = (4_000_000, 400_000)  # the probe's training and held-out samples (probe-fr: 3.1 M and 0.34 M)
# BERT-small, 2 x the first GPU run's 24.6 M positions an arm (past the plateau); one pretraining seed fits a slot
GPU = Pretraining(budget=6000, batch_size=64, seq_len=128, lr=5e-4, seeds=(0, 1, 2))
# a dry run's toy size on a CPU; 40 dev and test examples (whole sets were 3/4 of its time)
TOY = dict(sizes=("tiny",), pretraining=Pretraining(budget=4, batch_size=2, seq_len=32), finetuning=Finetuning(FinetuneConfig(
    epochs=1, batch_size=4, max_length=64, max_steps=2, max_train_sentences=8, max_eval_examples=40)))
# one H200, 16 cores, 540 s a command (10 min less run.sh and a margin), GPU jobs asking 1/8; the first slot's costs
SLOT = X.Slot(540.0, 16, 0.125, C.REPO / "benchmarks" / "results" / "gpu" / "h200-2026-11-28" / "costs.json")
PUBLISHED = C.REPO / "docs" / "results" / "ablation-gpu-fr"
FINISHED = ("text/text.json", "intrinsic.json", "probe/probe.json")  # what the page reads of the CPU side
PACK_CORPORA = "wmt-biomed-fr-en edsnlp-fr-terminology quaero-frenchmed morfitt-fr frenchmedmcqa"  # for pack.sh


def build_text(work: Path, quick: bool) -> dict:
    """work/text/; a text of another MIN_WORDS is rebuilt, what was made from it dropped (its probe samples too)."""
    if (work / "text" / "text.json").is_file():
        record = json.loads((work / "text" / "text.json").read_text(encoding="utf-8"))
        if record.get("min_words") == MIN_WORDS:
            return record
        for stale in ("text", "tokenizers", "probe", "intrinsic.json", "cpu_seconds.json"):
            shutil.rmtree(work / stale) if (work / stale).is_dir() else (work / stale).unlink(missing_ok=True)
    return C.pretraining_text(work / "text", C.french_pretraining_sources(200 if quick else None), C.FRENCH_TASKS,
                              min_words=MIN_WORDS, heldout_every=HELDOUT_EVERY)


def vocabularies(work: Path, quick: bool, train: bool = True) -> dict[str, str]:
    """name -> tokenizer folder: CamemBERTa's, and biotok's trained on the pretraining part (``train`` False: paths)."""
    size, out, text = 1000 if quick else 32000, {"camemberta-base": str(C.CAMEMBERTA)}, work / "text" / "pretrain.txt"
    for name, (algo, lower) in VOCABS.items():
        out[name] = str(path := work / "tokenizers" / name)
        cfg = TrainConfig(algo=algo, vocab_size=size, normalize=NormalizeConfig(lowercase=lower))
        if train:  # trained again when the text or the recipe changes
            X.phase(work, f"tokenizers/{name}", (cfg.to_dict(), X.sha(text)),
                    lambda: train_tokenizer([text], cfg, path, force=True, workers=1))
    return out


def probe(work: Path, vocabs: dict[str, str], seeds: tuple[int, ...], quick: bool) -> dict:
    """The probe in fair mode on every k-th line of the text's two parts, on one torch thread (byte-identical there)."""
    train, held = (C.line_sample(work / "text" / f"{p}.txt", work / "text" / f"probe_{p}.txt", n)
                   for p, n in zip(("pretrain", "heldout"), PROBE_CHARS))
    sizes = {**PROBE, "steps": 30, "seq_len": 64, "hidden": 64} if quick else PROBE
    run_probe(ProbeConfig(tokenizers=tuple(vocabs.values()), corpus=(str(train),), heldout=(str(held),), seeds=seeds,
                          fair=True, n_resamples=300 if quick else 2000, threads=1, **sizes), work / "probe", progress=True)
    return json.loads((work / "probe" / "probe.json").read_text(encoding="utf-8"))


def gpu_config(work: Path, tasks: tuple[str, ...] | None = None) -> AblationConfig:
    """The GPU ablation (every vocabulary and French task, floors); with ``tasks``, at toy size for a CPU."""
    cfg = AblationConfig(tokenizers=tuple(vocabularies(work, tasks is not None, train=False).values()), sizes=("small",),
                         corpus=(str(work / "text" / "text.txt"),), tasks=C.FRENCH_TASKS, data_dir=str(C.CORPORA), pretraining=GPU,
                         finetuning=Finetuning(seeds=(0, 1, 2)), statistics=Statistics(heldout_every=HELDOUT_EVERY, pairs="all"))
    return cfg if tasks is None else dataclasses.replace(  # every pair of vocabularies compared, at toy size too
        cfg, tasks=tasks, statistics=dataclasses.replace(cfg.statistics, n_words=50, n_resamples=200), **TOY)


def plan_section(work: Path, vocabs: dict[str, str]) -> list[str]:
    """The GPU recipe's GPU-minutes on one H100 from the GPU suite's throughput, then one seed's slot and what is done."""
    cfg, t = gpu_config(work), E.measured_throughput(GPU_SUITE)
    rows = E.gpu_plan(cfg, E.task_sizes(cfg.tasks, str(C.CORPORA)), t["h100_positions_per_s"])
    legs = json.loads(GPU_SUITE.read_text(encoding="utf-8"))["steps"]["ablation"]["legs"]
    first = sum(leg["tokens_seen"] for leg in legs) / len(legs)
    return R.plan_section(cfg, t, rows, 4) + [  # 4 fine-tunes share a GPU in its cost table
        f"Why this budget: {cfg.tokens_per_arm / first:.1f} x the positions per arm of the first GPU run "
        f"({first:,.0f}; its arms left the unigram plateau by far, `{t['source']}`), and one pretraining seed (every "
        "vocabulary, its fine-tunes and its floors) must fit one short GPU slot (below).", "",
        *X.slots_section(experiment(), work, cfg, write=False)]


def publish(dest: Path, command: str, text: dict, metrics: dict | None, probe_result: dict | None,
            vocabs: dict[str, str], work: Path, downstream: dict | None = None) -> None:
    """The page (:func:`benchmarks.experiments.ablation_gpu_fr_page.publish`), the GPU plan while some pretraining seed has no result."""
    partial = downstream is None or len(downstream.get("pretrain_seeds", GPU.seeds)) < len(GPU.seeds)
    plan = plan_section(work, vocabs) if partial and GPU_SUITE.is_file() else ()
    setup = R.PageSetup("AliBERT's question on one GPU: French vocabularies pretrained from scratch, and does the laptop "
                        "predict the answer?", command, "benchmarks/.data/ablation_gpu_fr/", VOCABS, HELDOUT_EVERY,
                        GPU.budget * GPU.batch_size * GPU.seq_len, plan,
                        X.baselines(work, C.FRENCH_TASKS, C.CORPORA) if downstream is None else {})
    R.publish(dest, setup, text, metrics, probe_result, vocabs, work, downstream)


def cpu_side(work: Path, dest: Path, command: str, a) -> None:
    """The phases in order, the page rewritten after each (a dry run: the first probe seed only)."""
    text = R.timed_phase(work, "text", work / "text" / "text.json", build_text, work, a.dry_run)
    vocabs = R.timed_phase(work, "vocabularies", work / "tokenizers" / list(VOCABS)[-1] / "tokenizer.json",
                           vocabularies, work, a.dry_run)
    texts = [work / "text" / f"{p}.txt" for p in ("heldout", "pretrain")]
    inputs = [X.sha(p) for p in (*texts, *map(Path, vocabs.values()))]
    for i in range(1 if a.dry_run else len(a.seeds)):
        result = probe(work, vocabs, tuple(a.seeds[:i + 1]), a.dry_run)
        metrics = R.timed_phase(work, "intrinsic", work / "intrinsic.json", X.phase, work, "intrinsic.json", inputs,
                                lambda: intrinsic_metrics(vocabs, *texts))  # made again when an input changes
        publish(dest, command, text, metrics, result, vocabs, work)


def page(work: Path, dest: Path, command: str, downstream: dict | None) -> None:
    """The page from what is finished (the CPU side's files and, once written, downstream.json)."""
    text, metrics, result = (json.loads((work / p).read_text(encoding="utf-8")) for p in FINISHED)
    publish(dest, command, text, metrics, result, vocabularies(work, "_dry" in work.name, False), work, downstream)


def experiment() -> X.Experiment:
    return X.Experiment(
        "ablation_gpu_fr", __doc__, gpu_config, cpu_side, page, WORK, GPU_PACK, PUBLISHED, C.FRENCH_TASKS,
        lacks=lambda w: next((f"no {w / p}" for p in FINISHED if not (w / p).is_file()), None),
        plan=lambda work: plan_section(work, vocabularies(work, "_dry" in work.name, train=False)),
        options=lambda ap: ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="probe seeds, in turn"),
        require=C.require_data, slot=SLOT, pack_corpora=PACK_CORPORA)


def main(argv: list[str] | None = None) -> int:
    return X.main(experiment(), argv)


if __name__ == "__main__":
    sys.exit(main())
