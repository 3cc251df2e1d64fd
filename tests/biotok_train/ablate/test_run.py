"""ablate: config, the statistics and report from finished runs (no training), resuming, the CLI,
and a tiny real run end to end (slow)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from biotok.errors import ConfigError
from biotok_train import stats as S
from biotok_train.ablate import ArmResult, leg_names, run_ablation, task_dir
from biotok_train.ablate.command import ablation_config, command_line, engine_config
import biotok_train.cli  # noqa: F401,E402  (registers the commands: -h as well as --help, see BiotokGroup.add_command)
from biotok_train.config import FinetuneConfig, OptimConfig
from biotok_train.ablate.config import AblationConfig, Base, EngineConfig, Finetuning, Pretraining, Statistics

ENTITIES = ["insuffisance rénale", "diabète", "hypertension artérielle", "fièvre", "anémie", "asthme"]


def _bio_task(d: Path, n_test: int = 40) -> Path:
    """A BIO task whose test sentences each hold one entity (one to two words)."""
    d.mkdir(parents=True, exist_ok=True)

    def sent(i: int) -> str:
        words = ENTITIES[i % len(ENTITIES)].split()
        tags = ["B-ety"] + ["I-ety"] * (len(words) - 1)
        rows = [f"Le O", f"patient{i} O", "présente O", *(f"{w} {t}" for w, t in zip(words, tags)), ". O"]
        return "\n".join(rows) + "\n\n"

    (d / "train.txt").write_text("".join(sent(i) for i in range(12)), encoding="utf-8")
    (d / "dev.txt").write_text("".join(sent(i) for i in range(4)), encoding="utf-8")
    (d / "test.txt").write_text("".join(sent(i) for i in range(n_test)), encoding="utf-8")
    return d


def _gold(task: Path) -> list[list[str]]:
    from biotok_train.tasks import load

    return [list(s.tags) for s in load(str(task)).test]


def _run(gold, right) -> dict:
    """predictions.json of a run that tags sentence i right when right(i), else all O."""
    from seqeval.metrics import f1_score
    from seqeval.scheme import IOB2

    pred = [g if right(i) else ["O"] * len(g) for i, g in enumerate(gold)]
    score = f1_score(gold, pred, mode="strict", scheme=IOB2, zero_division=0)
    return {"metric": "micro_f1", "score": score, "metrics": {"micro_f1": score},
            "labels": ["O", "B-ety", "I-ety"], "predictions": pred}


def _summary(values) -> dict:
    return S.summarize_seeds(values).to_dict()


def _heldout_rows(left: bool) -> list[list[float]]:
    """50 held-out sequences of 10 [MASK] positions: loss 5.2 (left the plateau) or 6.004 per position
    against a unigram floor of 6.0."""
    return [[52.0 if left else 60.04, 60.0, 2.0, 0.5, 10.0]] * 50


def _fake_ablation(monkeypatch, cfg: AblationConfig, skill: dict, floor_skill: dict, mlm_hits: dict,
                   left: dict | None = None) -> list[str]:
    """The ablation's jobs replaced by fakes whose results follow ``skill`` (fine-tuning: sentence i
    of seed f tagged right when skill[(size, arm)](i, f)), ``floor_skill``, ``mlm_hits`` (per held-out
    word) and ``left`` (whether an arm left the plateau); the engine, its records and the report
    are the real ones. Returns the list of jobs the fakes ran."""
    from biotok_train.ablate import jobs

    gold = _gold(Path(cfg.tasks[0]))
    ran: list[str] = []

    def arm_of(rel: str) -> tuple[str, str, bool]:
        parts = rel.split("/")  # arms/SIZE/ARM[/floor]/pP/...
        return parts[1], parts[2], parts[3] == "floor"

    def finetune(env, task, model, seed, rel_run, task_key=None, *, needs):
        size, arm, floor = arm_of(rel_run)
        ran.append(rel_run)
        return _run(gold, lambda i: (floor_skill if floor else skill)[(size, arm)](i, seed))

    def evaluate(env, vocab, rel_model, needs):
        size, arm, _ = arm_of(rel_model)
        ran.append(rel_model)
        hits = mlm_hits[(size, arm)]
        return {"mlm": {"accuracy": {"top1": sum(hits) / len(hits), "top3": 0.5, "top5": 0.6}, "n_words": len(hits),
                        "ranks": [1 if h else 2 for h in hits]},
                "heldout": {"rows": _heldout_rows((left or {}).get(arm, False))}}

    fakes = {"prepare": lambda env, vocab, tok, needs: ran.append(vocab) or {
                 "vocab_size": 2000, "num_tokens": 10000, "fertility": 1.5, "pieces_per_line": 40.0},
             "pretrain": lambda env, size, vocab, seed, rel, init, needs: ran.append(rel) or {
                 "steps": cfg.pretraining.budget, "final_loss": 5.0, "tokens_seen": 4096, "loss_curve": [[cfg.pretraining.budget, 5.0]]},
             "random_bert": lambda env, vocab, size, seed, rel, needs: ran.append(rel) or {"model": rel},
             "evaluate": evaluate, "finetune": finetune}
    for name, fn in fakes.items():
        monkeypatch.setattr(jobs, name, fn)
    return ran


def test_leg_names_unique():
    assert leg_names(["/a/camemberta-base", "/b/camemberta-base/", "x/tokenizer.json", "m.model"]) == [
        "camemberta-base", "camemberta-base-2", "x", "m"]


@pytest.mark.parametrize("changes", [
    {},
    dict(tasks=("e3c", "quaero"), sizes=("tiny", "small"), seeds=(0, 1), pretrain_seeds=(2, 3), floor=False,
         finetune=FinetuneConfig(epochs=5, optim=OptimConfig(lr=3e-5), batch_size=4, max_steps=7, train_fraction=0.25),
         field_name="text", data_dir=str(Path(__file__).parent),
         n_words=17, heldout_every=5, n_resamples=300, confidence=0.9, budget=9, batch_size=3, seq_len=16, lr=1e-3),
    dict(base="/m/base dir", arms=("scratch", "transfer"), transfer_methods=("random",)),
    dict(base="/m/b", arms=("general", "continual", "transfer"), transfer_methods=("fvt", "random"), curve=(50, 100)),
    dict(tasks=("e3c", "quaero"), curve=(50,), curve_tasks=()),
    dict(tasks=("e3c", "quaero"), curve=(50,), curve_tasks=("quaero", "e3c")),
])
def test_command_reads_back_as_the_same_config(changes):
    """The command line of a config, parsed by ``biotok-train ablate`` itself, gives that config back."""
    import shlex

    from biotok_train.cli.ablate import ablate_cmd

    cfg = AblationConfig.from_flat(tokenizers=("a", "b c"), corpus=("c.txt",), **changes)
    argv = shlex.split(command_line(cfg, "runs/ab"))
    assert argv[:2] == ["biotok-train", "ablate"]
    params = ablate_cmd.make_context("ablate", argv[2:]).params
    assert (str(params.pop("out")), params.pop("quiet"), params.pop("force")) == ("runs/ab", False, False)
    assert engine_config(params) == EngineConfig()  # who runs the jobs is not in the command line
    assert params.pop("precision") is None  # nor another machine's arithmetic
    assert ablation_config(**params) == cfg


def test_train_fraction_is_an_ablate_option_of_every_fine_tuning_run():
    from biotok_train.cli.ablate import ablate_cmd

    argv = ["--tokenizers", "a", "--corpus", "c.txt", "--train-fraction", "0.25", "--out", "x"]
    params = ablate_cmd.make_context("ablate", argv).params
    params.pop("out"), params.pop("quiet"), params.pop("force"), params.pop("precision"), engine_config(params)
    cfg = ablation_config(**params)
    assert cfg.finetuning.recipe.train_fraction == 0.25 and cfg.finetune_config(3).train_fraction == 0.25
    assert "--train-fraction 0.25" in command_line(cfg)
    assert "--train-fraction" not in command_line(AblationConfig(tokenizers=("a",), corpus=("c",)))
    with pytest.raises(ConfigError, match="train-fraction"):
        ablation_config(**{**params, "train_fraction": 0.0})


def _task_dir(task: Path) -> str:
    """The folder of a user's task in an ablation: its name and a short hash of its content key."""
    from biotok_train.ablate.keys import task_key
    from biotok_train.tasks import load

    return task_dir(str(task), task_key(str(task), load(str(task))))


def test_task_dir_keeps_paths_apart(tmp_path):
    a, b = tmp_path / "x" / "task", tmp_path / "y" / "task"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    assert task_dir("e3c") == "e3c"
    assert task_dir(str(a)) != task_dir(str(b)) and task_dir(str(a)).startswith("task-")


def test_report_from_finished_runs(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch):
    """Verdicts, floors, flags and Kendall τ computed from saved predictions; nothing retrained."""
    task = _bio_task(tmp_path / "task")
    toks = (str(tiny_unigram), str(tiny_wordpiece))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),), sizes=("tiny", "small"),
                         finetuning=Finetuning(seeds=(0, 1)), statistics=Statistics(n_words=40, n_resamples=300))
    ref, cand = leg_names(toks)
    out = tmp_path / "out"
    skill = {("tiny", ref): lambda i, f: i % 2 == 0, ("tiny", cand): lambda i, f: True,
             ("small", ref): lambda i, f: i % 4 != 0, ("small", cand): lambda i, f: True}
    floor = {("tiny", ref): lambda i, f: False, ("tiny", cand): lambda i, f: True,  # cand: floor as good as it
             ("small", ref): lambda i, f: False, ("small", cand): lambda i, f: False}
    mlm = {("tiny", ref): [1] * 20 + [0] * 20, ("tiny", cand): [1] * 20 + [0] * 20,
           ("small", ref): [1] * 30 + [0] * 10, ("small", cand): [1] * 35 + [0] * 5}
    ran = _fake_ablation(monkeypatch, cfg, skill, floor, mlm)
    report = run_ablation(cfg, out, progress=False)
    assert len(ran) == 2 + 2 * 2 * (1 + 1 + 2 + 1 + 2)  # 2 vocabularies; per size and arm 1 pretraining, 1 evaluation,
    # 2 fine-tunings, the floor's random model and its 2 fine-tunings

    by = {(c["size"], c["task"]): c for c in report.comparisons}
    ner = by[("tiny", str(task))]
    assert ner["verdict"] == "better" and ner["reference"] == pytest.approx(2 / 3)  # 20 of 40 entities, strict F1
    assert ner["n_clusters"] == 40 and ner["n_examples"] == 80  # 40 test sentences x 2 seeds
    assert by[("tiny", "mlm")]["verdict"] == "indistinguishable" and by[("tiny", "mlm")]["difference"] == 0
    flags = {(f["size"], f["arm"]): f["beats_floor"] for f in report.floors}
    assert flags == {("tiny", ref): True, ("tiny", cand): False, ("small", ref): True, ("small", cand): True}
    md = report.markdown
    assert {(f["size"], f["arm"]) for f in report.mlm_floors} == {(s, n) for s in ("tiny", "small") for n in (ref, cand)}
    word = report.mlm_floors[0]["word"]
    assert word and f"always “{word}”" in md and all(f["word"] == word for f in report.mlm_floors)
    assert "⚠ not above floor" in md and "too small to judge the vocabularies" in md
    assert f"{cand} is better than {ref}" in md and "**better**" in md
    assert any("Kendall τ" in r["sentence"] for r in report.rankings) and "## Do the sizes agree?" in md
    assert "biotok-train ablate --tokenizers" in md and "Versions: Python" in md
    data = json.loads(report.json_path.read_text(encoding="utf-8"))
    assert {a["name"] for a in data["arms"]} == {ref, cand} and data["reference"] == ref
    assert report.png_path.stat().st_size > 5000
    first, data_bytes = report.markdown_path.read_bytes(), report.json_path.read_bytes()
    ran.clear()
    again = run_ablation(cfg, out, progress=False)  # same inputs: nothing run again, byte-identical report
    assert ran == [] and again.markdown_path.read_bytes() == first and again.json_path.read_bytes() == data_bytes
    other = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),),
                           pretraining=Pretraining(budget=999))
    with pytest.raises(ConfigError, match="another recipe"):
        run_ablation(other, out, progress=False)


def test_cli_ablate_reuses_finished_runs(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch):
    from biotok_train.cli import main

    task = _bio_task(tmp_path / "task", n_test=20)
    toks = (str(tiny_unigram), str(tiny_wordpiece))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),),
                         finetuning=Finetuning(seeds=(0,)), statistics=Statistics(n_words=20))
    names = leg_names(toks)
    good = {("tiny", n): (lambda i, f: True) for n in names}
    _fake_ablation(monkeypatch, cfg, good, {("tiny", n): (lambda i, f: False) for n in names},
                   {("tiny", n): [1, 0] * 10 for n in names})
    args = ["ablate", "--tokenizers", *toks, "--corpus", str(sample_corpus), "--task", str(task), "--seeds", "0",
            "--n-words", "20", "--out", str(tmp_path / "out"), "-q"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert "## Results at size tiny" in res.output and "indistinguishable" in res.output
    bad = CliRunner().invoke(main, [*args[:-3], "--sizes", "tiny,huge", "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 2 and "error:" in bad.output and "huge" in bad.output


def test_cli_curve_tasks_none_fine_tunes_nothing_on_the_curve(tmp_path, sample_corpus, tiny_unigram, monkeypatch):
    from biotok_train.cli import main

    task = _bio_task(tmp_path / "task", n_test=20)
    cfg = AblationConfig(tokenizers=(str(tiny_unigram),), corpus=(str(sample_corpus),), tasks=(str(task),),
                         finetuning=Finetuning(seeds=(0,)))
    name = leg_names(cfg.tokenizers)[0]
    ran = _fake_ablation(monkeypatch, cfg, {("tiny", name): lambda i, f: True}, {("tiny", name): lambda i, f: False},
                         {("tiny", name): [1, 0] * 10})
    args = ["ablate", "--tokenizers", str(tiny_unigram), "--corpus", str(sample_corpus), "--task", str(task), "--seeds",
            "0", "--n-words", "20", "--budget", "10", "--curve", "5", "-q"]
    res = CliRunner().invoke(main, [*args, "--curve-tasks", "none", "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "## The held-out curve" in res.output and "--curve-tasks none" in res.output
    assert any(r.endswith("/curve/step-5") for r in ran) and not any("/k5/" in r for r in ran)
    bad = CliRunner().invoke(main, [*args, "--curve-tasks", "quaero", "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 2 and "--curve-tasks quaero" in bad.output and "Traceback" not in bad.output
    assert not (tmp_path / "o2").exists()


def test_only_runs_pieces_and_the_last_one_writes_the_report(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece,
                                                             monkeypatch):
    """--only: a piece runs its jobs and those they need, nothing else, and no report until every
    job has a record; pieces made on a machine of other arithmetic give the report here from their
    records (--precision), and a job with no such record is refused rather than run here."""
    from biotok_train.ablate import keys
    from biotok_train.ablate.run import Incomplete

    task = _bio_task(tmp_path / "task", n_test=20)
    toks = (str(tiny_unigram), str(tiny_wordpiece))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),),
                         pretraining=Pretraining(seeds=(0, 1)), finetuning=Finetuning(seeds=(0, 1)),
                         statistics=Statistics(n_words=20, n_resamples=200))
    ref, cand = leg_names(toks)
    skill = {("tiny", ref): lambda i, f: i % 2 == 0, ("tiny", cand): lambda i, f: True}
    floor = {("tiny", n): (lambda i, f: False) for n in (ref, cand)}
    ran = _fake_ablation(monkeypatch, cfg, skill, floor, {("tiny", n): [1, 0] * 10 for n in (ref, cand)})
    monkeypatch.setattr(keys, "precision_key", lambda: "cuda:bf16")  # the pieces run on "a GPU"
    out = tmp_path / "out"
    piece = EngineConfig(only=(f"finetune/tiny/{cand}/p1/*",))
    assert run_ablation(cfg, out, progress=False, engine=piece) is None
    assert sorted(ran) == sorted([cand, f"arms/tiny/{cand}/p1"] + [f"arms/tiny/{cand}/p1/{_task_dir(task)}/f{f}"
                                                                   for f in (0, 1)])
    assert not (out / "ablation.md").exists()
    with pytest.raises(ConfigError, match="--only finetune/tiny/nope/\\* matches no job"):
        run_ablation(cfg, out, progress=False, engine=EngineConfig(only=("finetune/tiny/nope/*",)))
    pieces = [f"finetune/tiny/{n}/{p}/*" for n in (ref, cand) for p in ("p0", "p1", "floor/p0", "floor/p1")]
    for pattern in pieces[:-1]:
        assert run_ablation(cfg, out, progress=False, engine=EngineConfig(only=(pattern, "evaluate/*"))) is None
    monkeypatch.undo()  # back on this machine, whose arithmetic is not the pieces'
    ran = _fake_ablation(monkeypatch, cfg, skill, floor, {("tiny", n): [1, 0] * 10 for n in (ref, cand)})
    monkeypatch.setattr(keys, "precision_key", lambda: "cpu:fp32")
    with pytest.raises(Incomplete, match=r"3 of 30 jobs .* no record made in cuda:bf16, and this machine computes "
                                         r"in cpu:fp32: run them where the others ran \(first: floor-model/tiny/"):
        run_ablation(cfg, out, progress=False, precision="cuda:bf16")
    assert ran == []
    monkeypatch.setattr(keys, "precision_key", lambda: "cuda:bf16")  # the last piece, on "the GPU"
    assert run_ablation(cfg, out, progress=False, engine=EngineConfig(only=(pieces[-1],))) is not None
    monkeypatch.setattr(keys, "precision_key", lambda: "cpu:fp32")
    ran.clear()
    report = run_ablation(cfg, out, progress=False, precision="cuda:bf16")
    assert ran == [] and {(f["arm"], f["beats_floor"]) for f in report.floors} == {(ref, True), (cand, True)}
    whole = tmp_path / "whole"  # the same grid in one go gives the same statistics
    monkeypatch.setattr(keys, "precision_key", lambda: "cuda:bf16")
    one_go = json.loads(run_ablation(cfg, whole, progress=False).json_path.read_text(encoding="utf-8"))
    pieced = json.loads(report.json_path.read_text(encoding="utf-8"))
    assert pieced["comparisons"] == one_go["comparisons"] and pieced["arms"] == one_go["arms"]


def test_cli_only_says_the_report_waits(tmp_path, sample_corpus, tiny_unigram, monkeypatch):
    from biotok_train.cli import main

    task = _bio_task(tmp_path / "task", n_test=20)
    cfg = AblationConfig(tokenizers=(str(tiny_unigram),), corpus=(str(sample_corpus),), tasks=(str(task),),
                         finetuning=Finetuning(seeds=(0,)))
    name = leg_names(cfg.tokenizers)[0]
    _fake_ablation(monkeypatch, cfg, {("tiny", name): lambda i, f: True}, {("tiny", name): lambda i, f: False},
                   {("tiny", name): [1, 0] * 10})
    args = ["ablate", "--tokenizers", str(tiny_unigram), "--corpus", str(sample_corpus), "--task", str(task), "--seeds",
            "0", "--n-words", "20", "--out", str(tmp_path / "out"), "-q"]
    res = CliRunner().invoke(main, [*args, "--only", f"finetune/tiny/{name}/p0/*"])
    assert res.exit_code == 0, res.output
    assert "the report waits for the others" in res.output and not (tmp_path / "out" / "ablation.md").exists()
    res = CliRunner().invoke(main, [*args, "--precision", "gpu-ish"])
    assert res.exit_code == 2 and "--precision must read DEVICE:bf16" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(main, args)  # the rest: the floor
    assert res.exit_code == 0 and "## Results at size tiny" in res.output


@pytest.mark.slow  # a few minutes on a shared 2-core CPU
def test_tiny_ablation_end_to_end(tmp_path, sample_corpus, tiny_wordpiece, tiny_unigram, monkeypatch):
    """Two tokenizers, a few pretraining steps each, floors: every arm gets a row, and a rerun reuses them."""
    task = _bio_task(tmp_path / "task", n_test=8)
    cfg = AblationConfig(tokenizers=(str(tiny_wordpiece), str(tiny_unigram)), corpus=(str(sample_corpus),),
                         tasks=(str(task),), pretraining=Pretraining(budget=2, batch_size=2, seq_len=32),
                         finetuning=Finetuning(seeds=(0, 1), recipe=FinetuneConfig(epochs=1, max_steps=2, batch_size=4)),
                         statistics=Statistics(n_words=10, heldout_every=50, n_resamples=100))
    report = run_ablation(cfg, tmp_path / "out", progress=False)
    assert [a.name for a in report.arms] == ["wordpiece", "unigram-lower"]
    for arm in report.arms:
        assert arm.vocab_size == 2000 and arm.steps == 2 and arm.metrics[str(task)]["n"] == 2
        assert arm.tokens_seen > 0 and arm.chars_seen > arm.tokens_seen and str(task) in arm.floors
    assert {c["task"] for c in report.comparisons} == {"mlm", str(task)} and len(report.floors) == 2
    assert (tmp_path / "out" / "costs.json").is_file()
    import biotok_train.pretrain.loop as loop

    monkeypatch.setattr(loop, "pretrain", lambda *a, **k: (_ for _ in ()).throw(AssertionError("redone")))
    again = run_ablation(cfg, tmp_path / "out", progress=False)
    assert [asdict(a) for a in again.arms] == [asdict(a) for a in report.arms]
    assert again.markdown == report.markdown


# --------------------------------------------------------------------------- arms from a base model


def test_arms_need_a_base_and_replace_sizes():
    from biotok_train.ablate import BASE_SIZE, Leg, plan_legs

    with pytest.raises(ConfigError, match="--base"):
        AblationConfig(tokenizers=("a",), corpus=("c",), arms=("scratch", "transfer"))
    with pytest.raises(ConfigError, match="choose"):
        AblationConfig(tokenizers=("a",), corpus=("c",), arms=("warm",), base=Base(model="m"))
    with pytest.raises(ConfigError, match="each once"):
        AblationConfig(tokenizers=("a",), corpus=("c",), arms=("scratch", "scratch"))
    with pytest.raises(ConfigError, match="--sizes does not apply"):
        AblationConfig(tokenizers=("a",), corpus=("c",), arms=("continual",), sizes=("small",), base=Base(model="m"))
    with pytest.raises(ConfigError, match="transfer-method"):
        AblationConfig(tokenizers=("a",), corpus=("c",), arms=("transfer",),
                       base=Base(model="m", transfer_methods=("focus",)))
    cfg = AblationConfig(tokenizers=("t/a", "t/b"), corpus=("c",), arms=("scratch", "continual", "transfer"),
                         base=Base(model="models/a"))
    assert cfg.sizes == (BASE_SIZE,)
    legs = plan_legs(cfg, {"t/a": "a", "t/b": "b"})
    # the reference first; the base's vocabulary is renamed when a candidate has its name
    assert legs == [Leg("continual.a-base", "models/a", "a-base", "continual"),
                    Leg("transfer.a", "t/a", "a", "transfer", "fvt"), Leg("scratch.a", "t/a", "a", "scratch"),
                    Leg("transfer.b", "t/b", "b", "transfer", "fvt"), Leg("scratch.b", "t/b", "b", "scratch")]
    cmd = command_line(cfg, "o")
    assert "--base models/a --arms scratch,continual,transfer" in cmd and "--sizes" not in cmd
    assert AblationConfig(tokenizers=("a",), corpus=("c",)).arms == ("scratch",)  # the default: no base needed


@pytest.fixture(scope="module")
def base_model(tmp_path_factory, sample_corpus, tiny_wordpiece) -> Path:
    """A 'general' BERT-tiny pretrained a few steps by biotok on its own WordPiece vocabulary."""
    from biotok_train.config import PrepareConfig, PretrainConfig
    from biotok_train.pretrain.loop import pretrain
    from biotok_train.pretrain.prepare import prepare

    d = tmp_path_factory.mktemp("base")
    data = prepare([str(sample_corpus)], str(tiny_wordpiece), PrepareConfig(seq_len=32), d / "data", progress=False)
    pretrain(data.path, PretrainConfig(size="tiny", steps=2, batch_size=2, seed=0), d / "general", progress=False)
    return d / "general"


def test_table9_arms_from_a_base_end_to_end(tmp_path, sample_corpus, tiny_unigram, base_model, monkeypatch):
    """continual (base vocabulary), transfer and scratch (candidate vocabulary): same budget, the
    base's architecture, the transferred model and the shared random start on disk; a rerun reuses all."""
    import torch
    from safetensors.torch import load_file

    task = _bio_task(tmp_path / "task", n_test=8)
    cfg = AblationConfig(tokenizers=(str(tiny_unigram),), corpus=(str(sample_corpus),), tasks=(str(task),),
                         arms=("scratch", "continual", "transfer"),
                         pretraining=Pretraining(budget=2, batch_size=2, seq_len=32),
                         finetuning=Finetuning(seeds=(0,), recipe=FinetuneConfig(epochs=1, max_steps=2, batch_size=4)),
                         base=Base(model=str(base_model)),
                         statistics=Statistics(n_words=10, heldout_every=50, n_resamples=100))
    out = tmp_path / "out"
    report = run_ablation(cfg, out, progress=False)
    assert [(a.name, a.init, a.vocabulary) for a in report.arms] == [
        ("continual.general", "continual", "general"), ("transfer.unigram-lower", "transfer", "unigram-lower"),
        ("scratch.unigram-lower", "scratch", "unigram-lower")]
    assert {a.steps for a in report.arms} == {2} and {a.size for a in report.arms} == {"as-base"}
    assert all(a.tokens_seen > 0 for a in report.arms)
    # every arm against the continual reference, every arm against the floor of its vocabulary
    assert {c["candidate_arm"] for c in report.comparisons} == {"transfer.unigram-lower", "scratch.unigram-lower"}
    assert {c["reference_arm"] for c in report.comparisons} == {"continual.general"} and len(report.floors) == 3
    assert (out / "transfer" / "fvt" / "unigram-lower" / "transfer.json").is_file()
    assert sorted(p.name for p in (out / "arms" / "as-base").iterdir()) == [
        "continual.general", "floor.general", "floor.unigram-lower", "scratch.unigram-lower", "transfer.unigram-lower"]
    # the scratch arm starts from the random model that is also its vocabulary's floor, with the base's shape
    start = load_file(out / "init" / "random.unigram-lower" / "p0" / "model.safetensors")
    moved = load_file(out / "transfer" / "fvt" / "unigram-lower" / "model.safetensors")
    assert {k: v.shape for k, v in start.items()} == {k: v.shape for k, v in moved.items()}
    emb = "bert.embeddings.word_embeddings.weight"
    assert not torch.equal(start[emb], moved[emb])
    assert "PubMedBERT's Table 9" in report.markdown and "--arms scratch,continual,transfer" in report.markdown
    # the continual arm was prepared with the base's own tokenizer
    assert report.arms[0].vocab_size == 2000
    import biotok_train.pretrain.loop as loop

    monkeypatch.setattr(loop, "pretrain", lambda *a, **k: (_ for _ in ()).throw(AssertionError("redone")))
    again = run_ablation(cfg, out, progress=False)
    assert again.markdown == report.markdown


def test_cli_ablate_base_errors(tmp_path, sample_corpus, tiny_unigram):
    from biotok_train.cli import main

    args = ["ablate", "--tokenizers", str(tiny_unigram), "--corpus", str(sample_corpus)]
    res = CliRunner().invoke(main, [*args, "--arms", "scratch,transfer", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--base" in res.output and not (tmp_path / "o").exists()
    res = CliRunner().invoke(main, [*args, "--arms", "continual", "--base", str(tmp_path / "nope"),
                                    "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "error:" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()
    res = CliRunner().invoke(main, [*args, "--arms", "continual", "--base", str(tiny_unigram),
                                    "--out", str(tmp_path / "o")])  # a tokenizer, not a model
    assert res.exit_code == 2 and "config.json" in res.output and not (tmp_path / "o").exists()


def test_a_recipe_saved_before_an_option_existed_still_resumes():
    from biotok_train.ablate import same_recipe

    new = AblationConfig(tokenizers=("a",), corpus=("c",), pretraining=Pretraining(budget=50)).recipe()
    old = {k: v for k, v in new.items() if k not in ("arms", "base", "transfer_methods", "curve", "curve_tasks")}
    assert same_recipe(old, new) and same_recipe(new, new)
    assert not same_recipe({**old, "budget": 60}, new)
    based = AblationConfig(tokenizers=("a",), corpus=("c",), arms=("continual",), pretraining=Pretraining(budget=50),
                           base=Base(model="m")).recipe()
    assert not same_recipe(old, based)  # a new option away from its default is another recipe
    assert not same_recipe({**new, "gone": 1}, new)


def test_word_floor_is_the_most_frequent_word(tmp_path):
    """The masked-word floor answers the pretraining text's most frequent word (ties: first in
    alphabetical order); a hit is an exact match of the held-out word."""
    from biotok_train.ablate import word_floor
    from biotok_train.evaluate.masked_words import sample_words

    train = tmp_path / "train.txt"
    train.write_text("le patient de la ville de Paris\nde novo, la fièvre de\n", encoding="utf-8")
    samples = sample_words(["la fièvre de la patiente", "De la ville"], 20, seed=0)
    word, hits = word_floor(train, samples)
    assert word == "de"
    assert [s.text[s.start:s.end] for s, h in zip(samples, hits) if h] == ["de"]  # "De" is another word
    assert len(hits) == len(samples) == 8
    (tmp_path / "empty.txt").write_text("12 34\n", encoding="utf-8")
    assert word_floor(tmp_path / "empty.txt", samples) == ("", (0.0,) * 8)


def test_every_pair_trivial_baselines_and_no_signal(tmp_path, sample_corpus, tiny_unigram, tiny_wordpiece, monkeypatch):
    """pairs="all" compares every pair of arms in one pass and keys no job differently; each task
    has its trivial baseline (NER: all O, entity F1 0) and, where no arm beats it, "no signal"."""
    import shutil

    task = _bio_task(tmp_path / "task")
    third = tmp_path / "uni2"
    shutil.copytree(tiny_unigram, third)
    toks = (str(tiny_unigram), str(tiny_wordpiece), str(third))
    cfg = AblationConfig(tokenizers=toks, corpus=(str(sample_corpus),), tasks=(str(task),), sizes=("tiny", "small"),
                         finetuning=Finetuning(seeds=(0, 1)),
                         statistics=Statistics(n_words=40, n_resamples=300, floor=False, pairs="all"))
    a, b, c = leg_names(toks)
    never, some = (lambda i, f: False), (lambda i, f: i % 2 == 0)
    skill = {("tiny", a): never, ("tiny", b): never, ("tiny", c): never,  # tiny: every arm tags nothing
             ("small", a): some, ("small", b): lambda i, f: True, ("small", c): some}
    mlm = {(s, n): [1] * 20 + [0] * 20 for s in ("tiny", "small") for n in (a, b, c)}
    ran = _fake_ablation(monkeypatch, cfg, skill, {}, mlm)
    report = run_ablation(cfg, tmp_path / "out", progress=False)
    pairs = {(x["size"], x["task"], x["reference_arm"], x["candidate_arm"]) for x in report.comparisons}
    assert pairs == {(s, t, r, k) for s in ("tiny", "small") for t in ("mlm", str(task))
                     for r, k in ((a, b), (a, c), (b, c))}
    base = report.baselines[str(task)]
    assert base["test"] == 0.0 and base["rule"] == "every word O (no entity)"
    beats = {(x["size"], x["arm"]): x["beats_baseline"] for x in report.baseline_checks}
    assert beats == {("tiny", a): False, ("tiny", b): False, ("tiny", c): False,
                     ("small", a): True, ("small", b): True, ("small", c): True}
    assert [(s["size"], s["task"]) for s in report.no_signal] == [("tiny", str(task))]
    md = report.markdown
    assert "## Every pair" in md and f"| {c} − {b} |" in md and "## Trivial baselines" in md
    assert "(**no signal**)" in md and "| trivial baseline | — |" in md
    assert "| 0.000 (every word O (no entity)) |" in md  # the constant answer said in words in the table's last row
    assert "biotok_train" not in md and "file-" not in md  # no internal module names, no folder hashes in the page
    assert any(s.startswith("At size tiny, ") and "carries no signal: no arm beats its trivial baseline (every word O "
               "(no entity): 0.000 on test)" in s for s in report.sentences)
    data = json.loads(report.json_path.read_text(encoding="utf-8"))
    assert data["pairs"] == "all" and data["no_signal"] == report.no_signal and len(data["per_pretrain_seed"]) == 6
    # the reference pairs only, on the same folder: no job runs again, the shared comparisons are the same numbers
    ran.clear()
    ref_only = run_ablation(dataclasses.replace(cfg, statistics=dataclasses.replace(cfg.statistics, pairs="reference")), tmp_path / "out", progress=False)
    assert ran == []
    assert {(x["reference_arm"], x["candidate_arm"]) for x in ref_only.comparisons} == {(a, b), (a, c)}
    same = [x for x in report.comparisons if x["reference_arm"] == a]
    assert sorted(ref_only.comparisons, key=str) == sorted(same, key=str)
    assert "## Every pair" not in ref_only.markdown
    with pytest.raises(ConfigError, match="--pairs 'some'"):
        AblationConfig(tokenizers=("x",), corpus=("c",), statistics=Statistics(pairs="some"))
