"""AliBERT's question on one GPU (issue 32): French vocabularies pretrained from scratch, and
does the laptop's verdict predict the downstream one? This is the pretraining text, the vocabularies,
the cheap instruments that each rank them, and the GPU ablation they are tested against.

    python -m benchmarks.experiments.ablation_gpu_fr              # the CPU side: rewrites docs/results/ablation-gpu-fr/
    python -m benchmarks.experiments.ablation_gpu_fr --gpu --engine ray --gpus-per-job 0.25   # the GPU side on one GPU machine (resumable)
    python -m benchmarks.experiments.ablation_gpu_fr --plan       # the GPU side's estimated GPU-minutes
    python -m benchmarks.experiments.ablation_gpu_fr --dry-run    # every piece at toy size on a CPU (a few minutes)

On short GPU slots (a bare machine, 10 minutes a command, only small files back; see
benchmarks/README.md): ``--pieces`` lists the pieces, what is done and the device command of the
next; ``--pack`` puts the text and vocabularies in .gpu/ beside ``../shared/gpu/pack.sh``'s;
``--piece NAME --archive FILE`` runs one piece there and packs its job records (no weights);
``--merge FILE...`` brings them home and, once every vocabulary has a pretraining seed with its
floors, writes the downstream side of the page from the records alone.

Phases, each kept in benchmarks/.data/ablation_gpu_fr/ (a rerun skips what is done):
(1) text: E3C PAMJ clinical cases (a document a line), E3C drug leaflets cut into sentences and
de-duplicated, WMT-biomed French abstracts, CIM-10 labels; minus every line that is or contains
a dev or test sentence of the evaluated tasks (``benchmarks.corpora.pretraining_text``); each 20th
line held out, as ``ablate`` splits its corpus; (2) vocabularies trained on the pretraining part: biotok
Unigram_L 32k (lowercased), BPE 32k (cased), AliBERT's cased Unigram 32k, beside CamemBERTa's;
(3) the intrinsic metrics of ``biotok compare`` on the held-out part and the text's size in
pieces per vocabulary; (4) the causal-LM probe in fair mode, one seed after the other, the page
rewritten after each; (5) with --gpu, the GPU ablation over ``ablate`` (BERT-small from scratch
per vocabulary, 3 pretraining x 3 fine-tuning seeds, random-init floors, every French task), each
job a piece of at most 8 minutes on one H100 (``biotok_train.ablate.estimate``), resumed job by job;
then each instrument's ranking against each task's (``biotok_train.predict``; the page:
``biotok_train.predict_report``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from benchmarks import corpora as C
from biotok import TrainConfig, train_tokenizer
from biotok.config import NormalizeConfig
from biotok.errors import BiotokError
from biotok_train import predict_report as R
from biotok_train.ablate import estimate as E
from biotok_train.ablate import leg_names, run_ablation
from biotok_train.ablate import pieces as P
from biotok_train.ablate import records as REC
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
# nothing and its model cannot come back, so a pretraining and all its fine-tunes make one piece, which must
# fit 8 minutes on an H100 at the GPU suite's throughput (--pieces: 7.6 at 6,000 steps, 9.4 at 9,000)
GPU = {"sizes": ("small",), "budget": 6000, "batch_size": 64, "seq_len": 128, "lr": 5e-4,
       "pretrain_seeds": (0, 1, 2), "seeds": (0, 1, 2)}
PACKED = 4  # fine-tunes sharing one GPU (the engine's --gpus-per-job 0.25)
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
    """The probe in fair mode on every k-th line of the pretraining and held-out parts."""
    train, held = (C.line_sample(work / "text" / f"{p}.txt", work / "text" / f"probe_{p}.txt", n)
                   for p, n in zip(("pretrain", "heldout"), PROBE_CHARS))
    sizes = {**PROBE, "steps": 30, "seq_len": 64, "hidden": 64} if quick else PROBE
    run_probe(ProbeConfig(tokenizers=tuple(vocabs.values()), corpus=(str(train),), heldout=(str(held),), seeds=seeds,
                          fair=True, n_resamples=300 if quick else 2000, **sizes), work / "probe", progress=True)
    return json.loads((work / "probe" / "probe.json").read_text(encoding="utf-8"))


def gpu_config(work: Path, vocabs: dict[str, str], tasks: tuple[str, ...] | None = None) -> AblationConfig:
    """The GPU ablation's recipe (every vocabulary, every French task, random-init floors); with
    ``tasks``, at toy size for a CPU in a few minutes (``--dry-run``)."""
    cfg = AblationConfig(tokenizers=tuple(vocabs.values()), corpus=(str(work / "text" / "text.txt"),),
                         tasks=C.FRENCH_TASKS, data_dir=str(C.CORPORA), heldout_every=HELDOUT_EVERY, **GPU)
    return cfg if tasks is None else dataclasses.replace(
        cfg, tasks=tasks, sizes=("tiny",), budget=4, batch_size=2, seq_len=32, pretrain_seeds=(0,), seeds=(0,),
        n_words=50, n_resamples=200,
        finetune=FinetuneConfig(epochs=1, batch_size=4, max_length=64, max_steps=2, max_train_sentences=8))


def gpu_side(work: Path, vocabs: dict[str, str], engine: EngineConfig, tasks: tuple[str, ...] | None,
             seeds: tuple[int, ...] | None = None) -> dict:
    """Run (or resume) the GPU ablation; its result with the comparisons of every pair of
    vocabularies (``ablate`` compares each arm with the first: the report is made again with each
    first, only the analysis runs again, the recipe's order last, whose files stay) and its costs.
    ``seeds``: over these pretraining seeds only (the pieces merged so far). With force: the work
    folder is this recipe's, whose config.json may hold fewer seeds from an earlier merge."""
    cfg, seen = gpu_config(work, vocabs, tasks), {}
    if seeds is not None:
        cfg = dataclasses.replace(cfg, pretrain_seeds=seeds)
    for i in (*range(1, len(toks := cfg.tokenizers)), 0):
        report = run_ablation(dataclasses.replace(cfg, tokenizers=toks[i:] + toks[:i]), work / "gpu", engine=engine,
                              progress=i == 0, force=True)
        result = json.loads(report.json_path.read_text(encoding="utf-8"))
        for c in result["comparisons"]:
            seen.setdefault((c["size"], c["task"], c["metric"], frozenset((c["reference_arm"], c["candidate_arm"]))), c)
    costs = json.loads(report.json_path.with_name("costs.json").read_text(encoding="utf-8"))
    return {**result, "comparisons": list(seen.values()), "costs": costs, "pretrain_seeds": list(cfg.pretrain_seeds),
            "pieces": REC.read_pieces(work / "gpu")}


def piece_plan(cfg: AblationConfig, work: Path) -> list[E.Piece]:
    """The GPU ablation ``cfg`` cut into pieces of one short slot each (:func:`~biotok_train.ablate.estimate.pieces`)."""
    if not (work / "text" / "text.json").is_file():
        raise BiotokError(f"no pretraining text in {work / 'text'}: run the CPU side first (python -m "
                          "benchmarks.experiments.ablation_gpu_fr), or --pack it for a GPU machine")
    t = E.measured_throughput(GPU_SUITE)
    rows = E.gpu_plan(cfg, E.task_sizes(cfg.tasks, str(C.CORPORA)), t["h100_positions_per_s"])
    chars = json.loads((work / "text" / "text.json").read_text(encoding="utf-8"))["pretrain"]["chars"]
    return E.pieces(cfg, leg_names(list(cfg.tokenizers)), rows, PACKED, chars)


def device_command(piece: E.Piece, tasks: tuple[str, ...] | None = None) -> str:
    """The command that runs ``piece`` on the GPU machine (``.gpu`` carried), its records into $OUT
    (``tasks``: the dry run's). The engine is the process pool: Ray's wheel (79 MB) cannot travel."""
    archive = "piece-" + piece.name.replace("/", "_") + ".tar.xz"
    return ("bash .gpu/run.sh python -m benchmarks.experiments.ablation_gpu_fr "
            + (f"--dry-run --tasks {','.join(tasks)} " if tasks else "")
            + f"--piece {piece.name} --archive \"$OUT/{archive}\" --engine processes --gpus-per-job {1 / PACKED:g}")


def piece_state(cfg: AblationConfig, work: Path) -> list[tuple[E.Piece, bool]]:
    """Each piece and whether work/gpu holds all its records (:func:`biotok_train.ablate.pieces.status`)."""
    return P.status(cfg, work / "gpu", piece_plan(cfg, work))


def pieces_table(state: list[tuple[E.Piece, bool]], tasks: tuple[str, ...] | None = None) -> list[str]:
    """The pieces with what is done (:mod:`biotok_train.ablate.pieces`), and the next one's command."""
    todo = [p for p, ok in state if not ok]
    return P.table(state) + (["Next, on the GPU machine with .gpu carried (after `--pack` here), then `--merge` its "
                              "archive here:", "", "    " + device_command(todo[0], tasks)] if todo else [])


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


def run_piece(work: Path, name: str, archive: Path, engine: EngineConfig, tasks: tuple[str, ...] | None) -> dict:
    """One piece of the GPU ablation in work/gpu (:func:`biotok_train.ablate.pieces.run_piece`),
    from --pack's text and vocabularies; its records into ``archive``."""
    unpack(work)
    cfg = gpu_config(work, vocabularies(work, tasks is not None, train=False), tasks)
    by_name = {p.name: p for p in piece_plan(cfg, work)}
    if name not in by_name:
        raise BiotokError(f"no piece {name!r} (the pieces: {', '.join(by_name)})")
    return P.run_piece(cfg, work / "gpu", by_name[name], engine, archive)


def merge(work: Path, archives: list[str], vocabs: dict[str, str], tasks: tuple[str, ...] | None) -> dict | None:
    """The pieces' records into work/gpu; then, with every piece of some pretraining seeds done
    (the floors included), the GPU ablation's report over those seeds from the records alone."""
    for a in archives:
        m = REC.import_records(a, work / "gpu")
        print(f"ablation_gpu_fr: merged piece {m.get('piece')} ({m.get('records')} records, {m.get('device')}, "
              f"{m.get('precision')})", file=sys.stderr)
    cfg = gpu_config(work, vocabs, tasks)
    state = piece_state(cfg, work)
    print("\n".join(pieces_table(state, tasks)))
    seeds = P.complete_seeds(cfg, state)
    if not seeds:
        return None
    return gpu_side(work, vocabs, EngineConfig(precision=REC.recorded_precision(work / "gpu")), tasks, seeds)


def plan_section(work: Path, vocabs: dict[str, str]) -> list[str]:
    """The GPU recipe's estimated GPU-minutes on one H100 from the GPU suite's measured throughput,
    and its pieces (one short GPU slot each) with what is done."""
    cfg, t = gpu_config(work, vocabs), E.measured_throughput(GPU_SUITE)
    rows = E.gpu_plan(cfg, E.task_sizes(cfg.tasks, str(C.CORPORA)), t["h100_positions_per_s"])
    legs = json.loads(GPU_SUITE.read_text(encoding="utf-8"))["steps"]["ablation"]["legs"]
    first = sum(leg["tokens_seen"] for leg in legs) / len(legs)
    arm = max(p.minutes for p in piece_plan(cfg, work) if "/floor/" not in p.name)
    return R.plan_section(cfg, t, rows, PACKED) + [
        f"Why this budget: {cfg.tokens_per_arm / first:.1f} x the positions per arm of the first GPU run "
        f"({first:,.0f}; its arms left the unigram plateau by far, `{t['source']}`), and a pretraining with its "
        f"{len(cfg.tasks) * len(cfg.seeds)} fine-tunes must make one piece of at most {E.PIECE_MINUTES:g} minutes "
        f"(below: {arm:.1f}).", "",
        "### In pieces of one short GPU slot", "",
        "A slot's machine keeps nothing and sends back only small files, so each pretraining goes with its "
        "fine-tunes in one piece, and its job records (no weights) come home in an archive. Each piece also "
        f"tokenizes the pretraining text (at {E.PREPARE_CHARS_PER_S:,.0f} characters/s, an assumption) and runs its "
        f"fine-tunes {PACKED} to the GPU. `--pieces` prints this table; `--pack` (after "
        f"`PACK_CORPORA='{PACK_CORPORA}' bash ../shared/gpu/pack.sh`) fills .gpu/ for the GPU machine; "
        "`--merge FILE...` brings archives home.", "", *pieces_table(piece_state(cfg, work)), ""]


def publish(dest: Path, command: str, text: dict, metrics: dict | None, probe_result: dict | None,
            vocabs: dict[str, str], work: Path, downstream: dict | None = None) -> None:
    """The page (:func:`biotok_train.predict_report.publish`), the GPU plan and its pieces while some
    pretraining seed has no downstream result."""
    partial = downstream is None or len(downstream.get("pretrain_seeds", GPU["pretrain_seeds"])) < len(GPU["pretrain_seeds"])
    plan = plan_section(work, vocabs) if partial and GPU_SUITE.is_file() else ()
    setup = R.PageSetup(TITLE, command, "benchmarks/.data/ablation_gpu_fr/", VOCABS, HELDOUT_EVERY,
                        GPU["budget"] * GPU["batch_size"] * GPU["seq_len"], plan)
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
                    help="every piece at toy size on the CPU (a few minutes), into benchmarks/.data/ablation_gpu_fr_dry/")
    ap.add_argument("--gpu", action="store_true", help="also run (or resume) the GPU ablation, then the prediction test")
    ap.add_argument("--publish", action="store_true", help="only write the page from the phases already finished")
    ap.add_argument("--plan", action="store_true", help="only print the GPU recipe's estimated GPU-minutes")
    ap.add_argument("--pieces", action="store_true",
                    help="list the GPU side's pieces (one short GPU slot each), which are done, and the next one's command")
    ap.add_argument("--pack", action="store_true",
                    help="put the text and the vocabularies in .gpu/ablation_gpu_fr/ for a GPU machine (after pack.sh)")
    ap.add_argument("--piece", metavar="NAME", help="on the GPU machine: run this piece only (see --pieces)")
    ap.add_argument("--archive", metavar="FILE", type=Path, help="with --piece: where its job records go (.tar.xz)")
    ap.add_argument("--merge", metavar="FILE", nargs="+", type=Path,
                    help="bring pieces' archives home; with every piece of a pretraining seed done, write the page")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="probe seeds, run one after the other")
    ap.add_argument("--tasks", default=",".join(C.FRENCH_TASKS), help="with --dry-run: the tasks to fine-tune")
    ap.add_argument("--engine", default="local", choices=("local", "ray", "processes"),
                    help="who runs the GPU side's jobs (biotok-train ablate --engine); processes where Ray is missing")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--gpus-per-job", type=float, default=0.0,
                    help="with --engine ray or processes: e.g. 0.25, four fine-tunes a GPU")
    a = ap.parse_args(argv)
    if a.piece is None:  # a piece runs on a GPU machine with .gpu/data (pack.sh's), not the whole shared data
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
        engine, tasks = EngineConfig(a.engine, a.workers, a.gpus_per_job), tuple(a.tasks.split(",")) if a.dry_run else None
        if a.piece is not None:
            if a.archive is None:
                raise BiotokError("--piece needs --archive FILE (where its records go)")
            m = run_piece(work, a.piece, a.archive, engine, tasks)
            print(f"ablation_gpu_fr: piece {m['piece']}: {m['records']} records in {m['wall_s']:.0f} s on {m['device']} "
                  f"-> {a.archive}", file=sys.stderr)
            return 0
        if a.pieces or a.pack or a.merge:
            vocabs = vocabularies(work, a.dry_run, train=False)
            if a.pack:
                print(f"ablation_gpu_fr: {pack(work, vocabs)}", file=sys.stderr)
            if a.merge:
                downstream = merge(work, [str(x) for x in a.merge], vocabs, tasks)
                if downstream is not None:
                    (work / "downstream.json").write_text(json.dumps(downstream, indent=1) + "\n", encoding="utf-8")
                    a.publish = True
                    run(work, dest, "python -m benchmarks.experiments.ablation_gpu_fr" + (" --dry-run" if a.dry_run else "")
                        + " --merge piece-*.tar.xz   # the pieces' archives (--pieces lists them)", a, engine)
                return 0
            print("\n".join(pieces_table(piece_state(gpu_config(work, vocabs, tasks), work), tasks)))
            return 0
        run(work, dest, command, a, engine)
    except (BiotokError, OSError) as e:  # a bad input, a full or read-only disk: one line
        print(f"ablation_gpu_fr: error: {e}", file=sys.stderr)
        return 2
    print(f"ablation_gpu_fr: {dest / 'README.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
