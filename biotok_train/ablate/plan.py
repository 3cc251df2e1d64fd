"""The plan of an ablation: its arms (legs), the pairs its report compares, and every job in plan
order (:func:`make_plan`, from its :class:`~biotok_train.ablate.config.AblationConfig`, its arms and the
fingerprints of its inputs; each job a :class:`~biotok_train.ablate.jobs.Job`).

Per vocabulary: ``prepare/V`` (its pretraining text and held-out lines prepared; an extended one
first made by ``extend/V``: the base's tokenizer plus K pieces of the pretraining text). With a base:
``transfer/M/V`` (the base moved to V by method M) and ``init/V/pP`` (the base's architecture,
random weights: the start of scratch.V and the floor of V). Without one: ``floor-model/S/ARM/pP``.
Per arm, size and pretraining seed: ``pretrain/S/ARM/pP`` (snapshots at the curve's steps),
``evaluate/S/ARM/pP`` (masked words, held-out [MASK] numbers), and per task and fine-tuning
seed ``finetune/S/ARM/pP/TASK/fF`` (the floors' as ``finetune/S/FLOOR/...``); the curve's
held-out evaluations ``evaluate/S/ARM/pP/kK`` and runs ``curve/S/ARM/pP/kK/TASK/fF``; with
--probe, ``probe``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable, Sequence

from biotok_train.ablate import jobs as J
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import Key, digest, finetune_settings
from biotok_train.ablate.store import Layout, snapshot_dir
from biotok_train.ablate.config import AblationConfig


def leg_names(tokenizers: Sequence[str]) -> list[str]:
    """Short unique names from tokenizer paths/aliases: directory or file stem, deduplicated."""
    names: list[str] = []
    for t in tokenizers:
        p = Path(str(t).rstrip("/"))
        base = p.name.split(".")[0] if p.name not in ("tokenizer.json", "tokenizer.json.gz") else p.parent.name
        base = re.sub(r"[^\w.-]+", "_", base) or "tok"
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.append(name)
    return names


@dataclass(frozen=True)
class Leg:
    """One arm of the ablation: its report name, its vocabulary and how its model starts."""

    name: str  # the arm's name (a folder name too)
    tokenizer: str  # its tokenizer (general, continual: the base model directory; extend: extend/VOCAB in OUT)
    vocab: str  # the vocabulary's name: data/VOCAB holds its prepared text
    init: str = "scratch"  # scratch | continual | transfer | general | extend
    method: str = ""  # transfer: how the new rows are made (TRANSFER_METHODS)

    @property
    def pretrained(self) -> bool:
        """Whether the arm is pretrained (every arm but general, the base as it is)."""
        return self.init != "general"


def base_vocab(cfg: AblationConfig, names: dict[str, str]) -> str:
    """The name of the base's own vocabulary, kept apart from the candidates' names."""
    vocab = leg_names([cfg.base.model])[0]
    while vocab in names.values():
        vocab += "-base"
    return vocab


def plan_legs(cfg: AblationConfig, names: dict[str, str]) -> list[Leg]:
    """The arms in report order, the reference first. Without a base: one scratch arm per
    tokenizer. With one: general, continual (the base's vocabulary), then per tokenizer a transfer
    arm per method (``transfer.T``, or ``transfer-METHOD.T`` with several methods) and scratch.
    The extend arm (``extend.B+K``: the base's vocabulary B plus K pieces, FVT rows) follows continual."""
    if cfg.base.model is None:
        return [Leg(names[t], t, names[t]) for t in cfg.tokenizers]
    bv = base_vocab(cfg, names)
    legs = [Leg(f"{a}.{bv}", cfg.base.model, bv, a) for a in ("general", "continual") if a in cfg.arms]
    if "extend" in cfg.arms:
        ev = f"{bv}+{cfg.base.extend_add}"
        legs.append(Leg(f"extend.{ev}", str(Layout().extend(ev)), ev, "extend", "fvt"))
    several = len(cfg.base.transfer_methods) > 1
    for t in cfg.tokenizers:
        if "transfer" in cfg.arms:
            legs += [Leg(f"transfer-{m}.{names[t]}" if several else f"transfer.{names[t]}", t, names[t], "transfer", m)
                     for m in cfg.base.transfer_methods]
        if "scratch" in cfg.arms:
            legs.append(Leg(f"scratch.{names[t]}", t, names[t], "scratch"))
    return legs


def comparison_pairs(legs: Sequence[Leg]) -> list[tuple[str, str]]:
    """(reference, candidate) pairs the report compares: every arm against the first; with a base
    also every transfer and scratch arm against continual (the same budget on the base's
    vocabulary: what the vocabulary buys) and each transfer method against the first method of the
    same vocabulary (what that method buys)."""
    ref = legs[0].name
    pairs = [(ref, leg.name) for leg in legs[1:]]
    cont = next((leg.name for leg in legs if leg.init == "continual"), None)
    for leg in legs:
        if cont and cont != ref and leg.init in ("transfer", "scratch", "extend"):
            pairs.append((cont, leg.name))
        first = next(x for x in legs if x.init == leg.init and x.vocab == leg.vocab)
        if leg.init == "transfer" and first is not leg and first.name != ref:
            pairs.append((first.name, leg.name))
    return list(dict.fromkeys(pairs))


def floor_name(leg: Leg, base: bool) -> str:
    """The name of an arm's floor under arms/SIZE/: its own (NAME/floor), or with a base one per
    vocabulary (floor.VOCAB: the arms of a vocabulary share the same random-init model)."""
    return f"floor.{leg.vocab}" if base else f"{leg.name}/floor"


def task_dir(task: str, key: str | None = None) -> str:
    """A folder name for a task: a registered name as is; a user's files as ``file-`` + a short hash
    of ``key`` (their content key, :func:`biotok_train.ablate.keys.task_key`): moved or renamed,
    their runs keep their folder, edited they get another. Without a key: the path's name + a
    short hash of the resolved path."""
    if re.fullmatch(r"[\w.-]+", task) and not Path(task).exists():
        return task
    if key is not None:
        return f"file-{key[:8]}"
    digest = hashlib.sha256(str(Path(task).resolve()).encode("utf-8")).hexdigest()[:8]
    stem = re.sub(r"[^\w.-]+", "_", Path(task.rstrip("/")).name) or "task"
    return f"{stem}-{digest}"


OUT = Layout()  # the paths of OUT, relative: what the jobs own and take


@dataclass
class Plan:
    """The jobs in plan order, and which fine-tuning runs make each cell of the report:
    ``runs[(size, arm, task, step)]`` = {"pP-fF": job key} (step None: the arm's final model)."""

    jobs: list[Job] = field(default_factory=list)
    runs: dict = field(default_factory=dict)
    _keys: set = field(default_factory=set, repr=False)

    def add(self, key: Key, run, args: tuple, needs: tuple[str, ...] = (), **kw) -> str:
        """The job ``key`` (planned once: a job several arms need is the first one's)."""
        text = str(key)
        if text not in self._keys:
            self._keys.add(text)
            self.jobs.append(Job(text, run, args, needs, **kw))
        return text


def pretrain_key(size: str, arm: str, p: int) -> str:
    return str(Key("pretrain", size, arm, pseed=p))


def evaluate_key(size: str, arm: str, p: int) -> str:
    return str(Key("evaluate", size, arm, pseed=p))


def heldout_key(size: str, arm: str, p: int, k: int) -> str:
    """The held-out evaluation of an arm's model after k steps of the curve (0: where it starts)."""
    return str(Key("evaluate", size, arm, pseed=p, step=k))


def _start(g: Plan, cfg: AblationConfig, fp: dict, leg: Leg, p: int) -> tuple[str | None, tuple[str, ...]]:
    """Where ``leg``'s pretraining (seed ``p``) starts: (model, the jobs that make it)."""
    if cfg.base.model is None:
        return None, ()
    if leg.init in ("general", "continual"):
        return cfg.base.model, ()
    if leg.init in ("transfer", "extend"):
        return _transferred(g, fp, leg, leg.method)
    return _random_init(g, cfg, fp, leg, p)


def _transferred(g: Plan, fp: dict, leg: Leg, method: str) -> tuple[str, tuple[str, ...]]:
    """transfer/M/V: the base moved to V's vocabulary (an extended one once ``extend/V`` made it)."""
    rel = str(OUT.transfer(method, leg.vocab))
    key = g.add(Key("transfer", vocab=leg.vocab, method=method), J.transfer, (method, leg.vocab, leg.tokenizer),
                _extended(leg), inputs=digest(fp["base"], fp["tok"][leg.vocab], method), owns=(rel,))
    return rel, (key,)


def _extended(leg: Leg) -> tuple[str, ...]:
    """The job that makes ``leg``'s vocabulary: ``extend/V`` for the extend arm, none for the others."""
    return (str(Key("extend", vocab=leg.vocab)),) if leg.init == "extend" else ()


def _random_init(g: Plan, cfg: AblationConfig, fp: dict, leg: Leg, p: int) -> tuple[str, tuple[str, ...]]:
    """init/random.V/pP: the base's architecture, random weights, V's tokenizer (a transferred model's)."""
    template, needs = (cfg.base.model, ()) if leg.init in ("general", "continual") else \
        _transferred(g, fp, leg, leg.method if leg.init == "extend" else cfg.base.transfer_methods[0])
    rel = str(OUT.init(leg.vocab, p))
    key = g.add(Key("init", vocab=leg.vocab, pseed=p), J.random_like, (template, p, rel), needs,
                inputs=digest(fp["base"], p), owns=(rel,))
    return rel, (key,)


def _floor_model(g: Plan, cfg: AblationConfig, fp: dict, size: str, leg: Leg, p: int) -> tuple[str, tuple[str, ...]]:
    """The random-init model a floor fine-tunes: with a base its vocabulary's init, else a fresh BERT."""
    if cfg.base.model is not None:
        return _random_init(g, cfg, fp, leg, p)
    rel = str(OUT.floor_model(size, leg.name, p))
    key = g.add(Key("floor-model", size, leg.name, pseed=p), J.random_bert, (leg.vocab, size, p, rel),
                (_prepare(leg),), inputs=digest(p, size), owns=(rel,))
    return rel, (key,)


def _finetunes(g: Plan, cfg: AblationConfig, fp: dict, cell: tuple, models: dict[int, tuple[str, tuple[str, ...]]],
               tasks: Sequence[str]) -> None:
    """Every (pretraining seed, fine-tuning seed) run of ``tasks`` on ``models`` (by pretraining seed):
    the arm's (``cell``: size, arm, step None), or the curve's at step K (in arms/SIZE/ARM/kK/)."""
    size, arm, step = cell
    kind = "finetune" if step is None else "curve"
    for task in tasks:
        runs = g.runs.setdefault((size, arm, task, step), {})
        for p, (model, needs) in models.items():
            for f in cfg.finetuning.seeds:
                folder = task_dir(task, fp["task"][task])
                rel = str(OUT.run(size, arm, p, step) / folder / f"f{f}")
                key = g.add(Key(kind, size, arm, pseed=p, task=folder, fseed=f, step=step), J.finetune,
                            (task, model, f, rel, fp["task"][task]), needs, owns=(rel,), gpus=1.0, shares_gpu=True,
                            inputs=digest(fp["task"][task], fp["base"], finetune_settings(cfg, f), fp.get("precision")))
                runs[f"p{p}-f{f}"] = key


def _arm(g: Plan, cfg: AblationConfig, fp: dict, size: str, leg: Leg) -> None:
    """One arm at one size: its pretraining and evaluation per seed, its fine-tunings and floors."""
    models = {}
    for p in cfg.pretraining.seeds:
        if not leg.pretrained:
            models[p] = (cfg.base.model, ())
            continue
        rel = str(OUT.run(size, leg.name, p))
        init, needs = _start(g, cfg, fp, leg, p)
        settings = [cfg.pretraining.budget, cfg.pretraining.batch_size, cfg.pretraining.lr, cfg.pretraining.seq_len, list(cfg.curve.steps), size, p, fp["base"], fp.get("precision")]
        key = g.add(Key("pretrain", size, leg.name, pseed=p), J.pretrain, (size, leg.vocab, p, rel, init),
                    (_prepare(leg), *needs), inputs=digest(settings), owns=(f"{rel}/model", f"{rel}/curve"), gpus=1.0)
        g.add(Key("evaluate", size, leg.name, pseed=p), J.evaluate, (leg.vocab, f"{rel}/model"), (key,),
              inputs=digest(cfg.statistics.n_words))
        models[p] = (f"{rel}/model", (key,))
    _finetunes(g, cfg, fp, (size, leg.name, None), models, cfg.tasks)
    if cfg.statistics.floor or (cfg.curve_task_list and leg.init == "scratch"):
        floors = {p: _floor_model(g, cfg, fp, size, leg, p) for p in cfg.pretraining.seeds}
        _finetunes(g, cfg, fp, (size, floor_name(leg, cfg.base.model is not None), None), floors, cfg.tasks)


def _curve(g: Plan, cfg: AblationConfig, fp: dict, size: str, leg: Leg, legs: Sequence[Leg]) -> None:
    """Each checkpoint of the curve (step 0: where the arm starts) scored on the held-out [MASK]
    positions, then fine-tuned on the curve's tasks (a run that another cell already makes, such
    as general's or the floor's, is that cell's)."""
    general = next((x for x in legs if x.init == "general"), None)
    for k in (0, *cfg.curve.steps):
        _heldout_point(g, cfg, fp, size, leg, k)
        for task in cfg.curve_task_list:
            cell = (size, leg.name, task, k)
            if k == 0 and leg.init == "continual" and general is not None:
                g.runs[cell] = g.runs[(size, general.name, task, None)]
            elif k == 0 and leg.init == "scratch":
                g.runs[cell] = g.runs[(size, floor_name(leg, cfg.base.model is not None), task, None)]
            elif k == 0:
                models = {p: _start(g, cfg, fp, leg, p) for p in cfg.pretraining.seeds}
                _finetunes(g, cfg, fp, cell[:2] + (0,), models, (task,))
            else:
                models = {p: (str(snapshot_dir(_rel(size, leg, p), k)), (pretrain_key(size, leg.name, p),))
                          for p in cfg.pretraining.seeds}
                _finetunes(g, cfg, fp, cell[:2] + (k,), models, (task,))


def _heldout_point(g: Plan, cfg: AblationConfig, fp: dict, size: str, leg: Leg, k: int) -> None:
    """``evaluate/S/ARM/pP/kK``: the arm's model after k steps scored as its final model is
    (:func:`~biotok_train.ablate.jobs.evaluate`). At k = 0 the model it starts from (the base, the
    transferred base, the random init of the base's architecture); a scratch arm without a base
    has none on disk (its random start is made inside its pretraining), so no point there."""
    if k == 0 and leg.init == "scratch" and cfg.base.model is None:
        return
    for p in cfg.pretraining.seeds:
        if k == 0:
            model, needs = _start(g, cfg, fp, leg, p)
            needs, inputs = (_prepare(leg), *needs), digest(cfg.statistics.n_words, fp["base"])
        else:
            model, needs = str(snapshot_dir(_rel(size, leg, p), k)), (pretrain_key(size, leg.name, p),)
            inputs = digest(cfg.statistics.n_words)
        g.add(Key("evaluate", size, leg.name, pseed=p, step=k), J.evaluate, (leg.vocab, model), needs, inputs=inputs)


def _prepare(leg: Leg) -> str:
    return str(Key("prepare", vocab=leg.vocab))


def _rel(size: str, leg: Leg, p: int) -> PurePosixPath:
    return OUT.run(size, leg.name, p)


def make_plan(cfg: AblationConfig, legs: Sequence[Leg], fp: dict) -> Plan:
    """Every job of the ablation in plan order (the most informative first: the preparations, then
    per size and arm its pretraining, evaluation and fine-tunings, then the curve and the probe).
    ``fp``: the fingerprints of the inputs (see :func:`biotok_train.ablate.keys.fingerprints`)."""
    g = Plan()
    for leg in legs:
        if leg.init == "extend":
            g.add(Key("extend", vocab=leg.vocab), J.extend, (leg.vocab, cfg.base.extend_add), inputs=fp["tok"][leg.vocab],
                  owns=(leg.tokenizer,))
    firsts: dict = {}
    for leg in legs:  # one preparation per vocabulary, in the order the arms name them
        firsts.setdefault((leg.vocab, leg.tokenizer), leg)
    for leg in firsts.values():
        vocab = leg.vocab
        g.add(Key("prepare", vocab=vocab), J.prepare, (vocab, leg.tokenizer), _extended(leg),
              inputs=digest(fp["corpus"], fp["tok"][vocab], cfg.pretraining.seq_len),
              owns=(str(OUT.data(vocab)), str(OUT.data(vocab, heldout=True))))
    for size in cfg.sizes:
        for leg in legs:
            _arm(g, cfg, fp, size, leg)
    for size in cfg.sizes:
        for leg in legs:
            if cfg.curve.steps and leg.pretrained:
                _curve(g, cfg, fp, size, leg, legs)
    if cfg.probe:
        vocabs = {leg.vocab: leg.tokenizer for leg in legs}
        g.add(Key("probe"), J.probe, (vocabs,), tuple(k for leg in legs for k in _extended(leg)), inputs=digest(fp["corpus"], [fp["tok"][v] for v in vocabs], cfg.probe,
                                                           cfg.pretraining.seeds, cfg.pretraining.batch_size, cfg.pretraining.seq_len),
              owns=(str(OUT.probe()),))
    return g


def select(jobs: Sequence[Job], patterns: Iterable[str]) -> list[Job]:
    """The jobs whose keys match one of ``patterns`` (fnmatch; ``*`` spans slashes) and every job
    they need, in plan order (all of them when ``patterns`` is empty)."""
    patterns = list(patterns)
    if not patterns:
        return list(jobs)
    by_key, wanted = {j.key: j for j in jobs}, set()
    todo = [j.key for j in jobs if any(fnmatch.fnmatchcase(j.key, p) for p in patterns)]
    while todo:
        key = todo.pop()
        if key not in wanted:
            wanted.add(key)
            todo += by_key[key].needs
    return [j for j in jobs if j.key in wanted]


__all__ = ["Leg", "Plan", "base_vocab", "comparison_pairs", "evaluate_key", "floor_name", "heldout_key", "leg_names",
           "make_plan", "plan_legs", "pretrain_key", "select", "task_dir"]
