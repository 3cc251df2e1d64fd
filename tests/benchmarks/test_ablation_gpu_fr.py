"""benchmarks/experiments/ablation_gpu_fr.py (CPU side) and benchmarks/corpora.py: the shared corpora's readers, and a
README whose every sentence comes from the numbers (the page itself: tests/biotok_train/test_predict_report.py; the
GPU plan: tests/biotok_train/ablate/test_estimate.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from benchmarks.experiments import ablation_gpu_fr as A
from benchmarks import corpora as C

HELD = ["Le patient a de la fièvre.", "Une Toux sèche depuis deux jours."]


@pytest.fixture(autouse=True)
def _no_plan(monkeypatch):
    """The GPU plan reads the tasks from the shared data: tested on its own below."""
    monkeypatch.setattr(A, "plan_section", lambda work, vocabs: ["## The GPU side (plan)", ""])


def test_the_shared_corpora_readers(shared_data):
    assert next(C.cim10_labels()) == "Choléra"
    assert sum(1 for _ in C.pamj_documents()) == 1520  # MANIFEST: 1,520 documents
    assert next(C.leaflet_texts()).startswith("A 313 200 000 UI POUR CENT, pommade")
    first = list(zip(range(3), C.wmt_biomed_french()))
    assert first[0][1] == "Abstract" and all("\n" not in line for _, line in first)
    assert C.CAMEMBERTA.is_dir() and set(C.FRENCH_TASKS) >= {"e3c", "morfitt", "frenchmedmcqa"}


def _work(tmp_path, chars: list[int]) -> tuple:
    """A work folder with the probe's held-out sample and runs, and the records publish reads."""
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "probe_heldout.txt").write_text("\n".join(HELD) + "\n", encoding="utf-8")
    bits = {"Unigram_L-32k": [30.0, 40.0], "camemberta-base": [40.0, 50.0]}
    total = sum(chars)
    for arm, b in bits.items():
        (tmp_path / "probe" / "runs" / arm).mkdir(parents=True)
        (tmp_path / "probe" / "runs" / arm / "seed0.json").write_text(
            json.dumps({"tokenizer": arm, "seed": 0, "doc_bits": b}), encoding="utf-8")
    probe = {"setup": {"seeds": [0], "text": "fair: lowercases", "model": {"layers": 2, "hidden": 128}, "steps": 400,
                       "batch_size": 8, "seq_len": 128, "tokens_per_arm": 409600, "train_chars": 1000,
                       "heldout_chars": total, "heldout_documents": 2},
             "arms": [{"name": a, "bits_per_char": {"mean": sum(b) / total, "std": None, "n": 1,
                                                    "values": [sum(b) / total]},
                       "versus_floor": {"difference": -0.5, "low": -0.6, "high": -0.4}} for a, b in bits.items()],
             "verdicts": ["camemberta-base is worse than Unigram_L-32k: +0.1 bits/char [+0.05, +0.15]."]}
    text = {"tasks": ["e3c", "morfitt"], "evaluated_sentences": 1234, "min_words": 6,
            "sources": {"PAMJ": {"lines_in": 10, "chars_in": 5000, "kept": 9, "excluded": 1, "matched": 1, "chars": 4500}},
            "text": {"lines": 9, "chars": 4500}, "pretrain": {"lines": 9, "chars": 4300}, "heldout": {"lines": 0, "chars": 200}}
    metrics = {n: {"fertility": f, "renyi_efficiency": r, "zipf": {"r2": z, "exponent": 1.0}, "chars_per_piece": 4.0,
                   "pretrain_pieces": 1_000_000} for n, f, r, z in (("camemberta-base", 1.4, 0.40, 0.90),
                                                                     ("Unigram_L-32k", 1.3, 0.45, 0.95))}
    return probe, text, metrics


def test_readme_from_the_numbers(tmp_path, tiny_unigram, tiny_wordpiece):
    chars = [len(s.lower()) for s in HELD]
    probe, text, metrics = _work(tmp_path, chars)
    vocabs = {"camemberta-base": str(tiny_wordpiece), "Unigram_L-32k": str(tiny_unigram)}
    A.publish(tmp_path / "page", "python -m benchmarks.experiments.ablation_gpu_fr", text, metrics, probe, vocabs, tmp_path)
    readme = (tmp_path / "page" / "README.md").read_text(encoding="utf-8")
    assert "**Status: the GPU side is pending.**" in readme and "## The GPU side (plan)" in readme
    assert "- 1 lines left out because they are or contain one of the 1,234 dev and test sentences of e3c, morfitt" in readme
    assert "a sentence of fewer than 6 words" in readme
    assert "- the causal-LM probe (fair, bits/char), best first: Unigram_L-32k > camemberta-base." in readme
    assert "- fertility (pieces/word), best first: Unigram_L-32k > camemberta-base." in readme
    assert "- Rényi efficiency against the probe (interval: bootstrap over the probe's held-out documents): " \
           "Kendall tau +1.00 [+1.00, +1.00] (p = 1.000, 2 vocabularies); both choose Unigram_L-32k." in readme
    assert "With 2 vocabularies, even a perfect agreement has p = 1.000 (exact test)" in readme
    assert "The laptop verdicts to be tested: the causal-LM probe (fair, bits/char) chooses Unigram_L-32k;" in readme
    assert "| Unigram_L-32k | 1.186 | -0.500 [-0.600, -0.400] | 1.300 | 0.450 | 0.950 (1.00) | 0.250 |" in readme
    for name in ("text.json", "intrinsic.json", "probe.json"):
        assert (tmp_path / "page" / name).is_file()


def test_readme_before_the_probe_and_metrics(tmp_path, tiny_unigram):
    probe, text, _ = _work(tmp_path, [len(s.lower()) for s in HELD])
    A.publish(tmp_path / "page", "cmd", text, None, None, {"Unigram_L-32k": str(tiny_unigram)}, tmp_path)
    readme = (tmp_path / "page" / "README.md").read_text(encoding="utf-8")
    assert "| Unigram_L-32k | pending | pending | pending | pending | pending | pending |" in readme
    assert "No instrument has run yet." in readme and "best first" not in readme


def test_the_probe_characters_must_be_the_probes(tmp_path, tiny_unigram, tiny_wordpiece):
    from biotok.errors import ConfigError

    probe, text, metrics = _work(tmp_path, [len(s) + 1 for s in HELD])  # not the documents the probe scored
    vocabs = {"camemberta-base": str(tiny_wordpiece), "Unigram_L-32k": str(tiny_unigram)}
    with pytest.raises(ConfigError, match="do not match"):
        A.publish(tmp_path / "page", "cmd", text, metrics, probe, vocabs, tmp_path)


def test_readme_with_the_downstream_result(tmp_path, tiny_unigram, tiny_wordpiece):
    probe, text, metrics = _work(tmp_path, [len(s.lower()) for s in HELD])
    vocabs = {"camemberta-base": str(tiny_wordpiece), "Unigram_L-32k": str(tiny_unigram)}
    arm = lambda name, f1: {"name": name, "size": "small", "metrics": {"e3c": {"mean": f1}}}  # noqa: E731
    downstream = {"tasks": {"e3c": {"name": "e3c", "metric": "entity_f1"}},
                  "arms": [arm("camemberta-base", 0.36), arm("Unigram_L-32k", 0.35)],
                  "comparisons": [{"task": "e3c", "size": "small", "reference_arm": "camemberta-base",
                                   "candidate_arm": "Unigram_L-32k", "verdict": "indistinguishable",
                                   "difference": -0.01, "low": -0.05, "high": 0.03}],
                  "floors": [{"beats_floor": True}, {"beats_floor": False}],
                  "costs": {"jobs": {"pretrain/a": {"device": "cuda", "wall_s": 300.0},
                                     "finetune/a": {"device": "cuda", "wall_s": 60.0}}}}
    A.publish(tmp_path / "page", "cmd", text, metrics, probe, vocabs, tmp_path, downstream)
    readme = (tmp_path / "page" / "README.md").read_text(encoding="utf-8")
    assert "GPU side is pending" not in readme and "## The GPU side (plan)" not in readme
    assert "- e3c (entity_f1), best first: camemberta-base > Unigram_L-32k (Unigram_L-32k cannot be told from " \
           "camemberta-base)." in readme
    assert "- the causal-LM probe (fair, bits/char) would have chosen Unigram_L-32k; the best on e3c (entity_f1) is " \
           "camemberta-base, which the downstream result cannot tell from Unigram_L-32k" in readme
    assert "**In one line**: Over 4 instrument-task pairs, the laptop verdict chose the downstream best 0 times, " \
           "a vocabulary the downstream result cannot tell from its best 4 more times" in readme
    assert "- e3c: Unigram_L-32k minus camemberta-base -0.010 [-0.050, +0.030]: indistinguishable." in readme
    assert "- 1 of 2 arm-task pairs beat their random-init floor." in readme
    assert "- The GPU ablation's jobs took 6.0 minutes on cuda (costs.json" in readme


def test_dry_run_runs_every_piece_end_to_end(shared_data, tmp_path, monkeypatch, capsys):
    """--dry-run: the text, toy vocabularies, the probe, the intrinsic metrics, the GPU ablation over
    ablate at toy size on the CPU (one task here), every pair compared, and the page with the verdicts;
    then the same GPU side in pieces (below)."""
    monkeypatch.setattr(A, "WORK", tmp_path)
    assert A.main(["--dry-run", "--tasks", "e3c"]) == 0
    work = tmp_path / "ablation_gpu_fr_dry"
    readme = (work / "page" / "README.md").read_text(encoding="utf-8")
    down = json.loads((work / "downstream.json").read_text(encoding="utf-8"))
    pairs = {frozenset((c["reference_arm"], c["candidate_arm"])) for c in down["comparisons"] if c["task"] == "e3c"}
    assert len(pairs) == 6  # every pair of the 4 vocabularies, not only against the first
    assert "- e3c (entity_f1), best first: " in readme and "**In one line**: Over 4 instrument-task pairs" in readme
    assert "minutes on cpu (costs.json" in readme and (work / "page" / "gpu" / "ablation.json").is_file()
    assert A.main(["--dry-run", "--tasks", "e3c", "--publish"]) == 0  # the page again from the records alone
    assert (work / "page" / "README.md").read_text(encoding="utf-8") == readme  # it names the command that made it
    _in_pieces(tmp_path, work, down, monkeypatch, capsys)


def _in_pieces(tmp_path, work, down, monkeypatch, capsys):
    """The same GPU side as short GPU slots run it: --pack beside pack.sh's .gpu/, a piece on a bare
    machine (only .gpu and the checkout), its records home in an archive (--merge); the report waits
    for every piece of a pretraining seed, then gives the verdicts of the run in one go."""
    from biotok_train.ablate.records import export_records

    gpu = tmp_path / ".gpu"
    monkeypatch.setattr(A, "GPU_PACK", gpu)
    assert A.main(["--dry-run", "--tasks", "e3c", "--pack"]) == 2  # pack.sh first
    assert "run PACK_CORPORA=" in capsys.readouterr().err
    monkeypatch.setattr(A, "WORK", tmp_path / "nothing")
    assert A.main(["--dry-run", "--tasks", "e3c", "--pieces"]) == 2  # before the CPU side: one line
    assert "error: no pretraining text in" in capsys.readouterr().err
    monkeypatch.setattr(A, "WORK", tmp_path)
    (gpu / "run.sh").parent.mkdir()
    (gpu / "run.sh").write_text("# pack.sh's\n", encoding="utf-8")
    for corpus in A.PACK_CORPORA.split():
        (gpu / "data" / "corpora" / corpus).mkdir(parents=True)
    assert A.main(["--dry-run", "--tasks", "e3c", "--pack"]) == 0
    out = capsys.readouterr().out
    assert "| Unigram_L-32k/p0 | prepare, pretrain seed 0, evaluate, 1 tasks x 1 seeds |" in out
    assert "| BPE-32k/floor/p0 | prepare, random-init floors of pretraining seed 0, 1 tasks x 1 seeds |" in out
    assert "8 of 8 pieces done, 0 estimated H100-minutes left." in out

    monkeypatch.setattr(A, "WORK", tmp_path / "device")  # a bare machine: only what --pack put in .gpu
    archive = tmp_path / "piece-BPE-32k_p0.tar.xz"
    assert A.main(["--dry-run", "--tasks", "e3c", "--piece", "BPE-32k/p0", "--archive", str(archive),
                   "--engine", "processes", "--workers", "2"]) == 0  # as on the GPU machine, which has no Ray
    device = tmp_path / "device" / "ablation_gpu_fr_dry"
    assert (device / "text" / "text.txt").read_bytes() == (work / "text" / "text.txt").read_bytes()
    made = sorted(p.relative_to(device / "gpu" / "jobs") for p in (device / "gpu" / "jobs").rglob("*.json")
                  if not p.name.endswith(".cost.json"))
    assert [str(p) for p in made] == ["evaluate/tiny/BPE-32k/p0.json", "finetune/tiny/BPE-32k/p0/e3c/f0.json",
                                      "prepare/BPE-32k.json", "pretrain/tiny/BPE-32k/p0.json"]
    for rel in made:  # the same content keys as at home: the records can stand in for the home's
        assert json.loads((device / "gpu" / "jobs" / rel).read_text(encoding="utf-8"))["inputs"] == \
            json.loads((work / "gpu" / "jobs" / rel).read_text(encoding="utf-8"))["inputs"]
    assert A.main(["--dry-run", "--tasks", "e3c", "--piece", "nope/p0", "--archive", str(archive)]) == 2
    assert "no piece 'nope/p0' (the pieces: camemberta-base/p0," in capsys.readouterr().err

    monkeypatch.setattr(A, "WORK", tmp_path)
    everything = tmp_path / "all.tar.xz"  # every record the one-go run made, as if from the other pieces
    export_records(work / "gpu", everything, {"piece": "the rest", "device": "cpu"})
    shutil.rmtree(work / "gpu")
    (work / "downstream.json").unlink()
    assert A.main(["--dry-run", "--tasks", "e3c", "--merge", str(archive)]) == 0
    out = capsys.readouterr().out
    assert "1 of 8 pieces done" in out and not (work / "downstream.json").exists()
    assert "--dry-run --tasks e3c --piece camemberta-base/p0 --archive" in out  # the next piece's command
    assert A.main(["--dry-run", "--tasks", "e3c", "--merge", str(everything)]) == 0
    merged = json.loads((work / "downstream.json").read_text(encoding="utf-8"))
    assert merged["comparisons"] == down["comparisons"] and merged["floors"] == down["floors"]
    assert merged["pretrain_seeds"] == [0] and [p["piece"] for p in merged["pieces"]] == ["BPE-32k/p0", "the rest"]
    page = (work / "page" / "README.md").read_text(encoding="utf-8")
    assert "--merge piece-*.tar.xz" in page and "- Pretraining seeds in these verdicts: 0; from 2 pieces run" in page
    assert A.main(["--dry-run", "--tasks", "e3c", "--merge", str(tmp_path / "missing.tar.xz")]) == 2
    assert "missing.tar.xz is not an archive of ablation records (not found)" in capsys.readouterr().err


def test_a_task_it_cannot_use_is_refused_before_any_work(shared_data, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(A, "WORK", tmp_path)
    assert A.main(["--dry-run", "--tasks", "e3c,nope"]) == 2
    assert "ablation_gpu_fr: error: unknown task 'nope'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_rebuilt_text_drops_its_probe_samples(tmp_path, monkeypatch):
    """A text made with another MIN_WORDS is rebuilt with everything made from it; the probe samples
    live beside it and are written once, so a kept one would score the probe on the old text's lines
    (the two-seed page's 2,730 held-out lines came from such a sample)."""
    built = []

    def fake_text(folder, sources, tasks, *, min_words, heldout_every):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "heldout.txt").write_text(f"held-out line of the text at {min_words} words\n", encoding="utf-8")
        (folder / "text.json").write_text(json.dumps({"min_words": min_words}), encoding="utf-8")
        built.append(min_words)
        return {"min_words": min_words}

    monkeypatch.setattr(C, "pretraining_text", fake_text)
    monkeypatch.setattr(C, "french_pretraining_sources", lambda limit: {})
    sample = lambda: C.line_sample(tmp_path / "text" / "heldout.txt", tmp_path / "text" / "probe_heldout.txt", 10)
    monkeypatch.setattr(A, "MIN_WORDS", 1)
    A.build_text(tmp_path, quick=True)
    assert "at 1 words" in sample().read_text(encoding="utf-8")
    (tmp_path / "probe").mkdir()
    A.build_text(tmp_path, quick=True)  # the same MIN_WORDS: kept, nothing rebuilt or dropped
    assert built == [1] and (tmp_path / "probe").is_dir()
    monkeypatch.setattr(A, "MIN_WORDS", 6)
    A.build_text(tmp_path, quick=True)
    assert built == [1, 6] and not (tmp_path / "probe").exists()
    assert "at 6 words" in sample().read_text(encoding="utf-8")
