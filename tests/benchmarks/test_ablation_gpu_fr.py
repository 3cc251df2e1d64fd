"""benchmarks/experiments/ablation_gpu_fr.py (CPU side) and benchmarks/corpora.py: the shared corpora's readers, and a
README whose every sentence comes from the numbers (the page itself: tests/benchmarks/test_ablation_gpu_fr_page.py; the
GPU plan: tests/biotok_train/ablate/test_estimate.py)."""

from __future__ import annotations

import json
import shlex
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


def test_dry_run_then_a_seed_in_slots_killed_run_again_and_merged(shared_data, tmp_path, monkeypatch, capsys):
    """--dry-run: the text, toy vocabularies, the probe, the intrinsic metrics, the GPU ablation over
    ablate at toy size on the CPU (one task here), every pair compared, and the page with the verdicts;
    then the same GPU side as short slots run it (below)."""
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
    _in_slots(shared_data, tmp_path, work, down, monkeypatch, capsys)


def _pack_sh(data, gpu):
    """What ../shared/gpu/pack.sh copies into .gpu/data (its wheels aside): the GPU machine's only data."""
    (gpu / "data" / "tokenizers").mkdir(parents=True)
    shutil.copytree(data / "tokenizers" / "camemberta-base", gpu / "data" / "tokenizers" / "camemberta-base")
    (gpu / "data" / "corpora" / "e3c-fr").mkdir(parents=True)
    for pattern in ("layer3_fr_*.jsonl.xz", "layer1_clinical_entities_iob_*.txt.gz"):
        for f in (data / "corpora" / "e3c-fr").glob(pattern):
            shutil.copyfile(f, gpu / "data" / "corpora" / "e3c-fr" / f.name)
    for extra in A.PACK_CORPORA.split():
        shutil.copytree(data / "corpora" / extra, gpu / "data" / "corpora" / extra)
    (gpu / "run.sh").write_text("# pack.sh's\n", encoding="utf-8")


def _device(gpu, device, command, out, kill_after_records=None):
    """The device command as the GPU machine runs it (``$OUT`` = ``out``), in a process of its own
    whose only data is what pack.sh and --pack put in ``gpu``; without a GPU, so without GPU shares
    (``--gpus-per-job`` dropped) and with a limit a loaded 2-core CPU can keep. With
    ``kill_after_records``: SIGKILL (the process and its workers) once its archive holds that many
    records and before it ends. Returns its exit status."""
    import os
    import signal
    import subprocess
    import sys
    import tarfile
    import time

    args = shlex.split(command.split("ablation_gpu_fr ", 1)[1].replace("$OUT", str(out)))
    i = args.index("--gpus-per-job")
    args = args[:i] + args[i + 2:] + ["--workers", "2"]
    args[args.index("--slot") + 1] = "100000"
    code = ("import sys; from pathlib import Path; from benchmarks.experiments import ablation_gpu_fr as A; "
            f"A.GPU_PACK = Path({str(gpu)!r}); A.WORK = Path({str(device)!r}); sys.exit(A.main({args!r}))")
    env = {**os.environ, "BIOTOK_SHARED_DATA": str(gpu / "data"), "PYTHONPATH": str(C.REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=C.REPO, env=env, start_new_session=True)
    archive = out / "slot.tar.xz"
    while kill_after_records is not None and proc.poll() is None:
        try:
            with tarfile.open(archive) as tar:
                n = sum(1 for m in tar.getnames() if m.startswith("jobs/") and not m.endswith(".cost.json"))
        except (OSError, tarfile.TarError, EOFError):
            n = 0
        if n >= kill_after_records:
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.1)
    return proc.wait(timeout=1800)


def _next_command(out: str) -> str:
    return next(line.strip() for line in out.splitlines() if line.strip().startswith("bash .gpu/run.sh"))


def _in_slots(data, tmp_path, work, down, monkeypatch, capsys):
    """Issue 38's 'done when': one seed's slot on a work folder holding only what pack.sh and --pack
    put in .gpu, killed partway, its archive merged home (whole units only), the next slot on a
    fresh machine runs what is missing, merged home: every job of the seed counts done and the
    verdicts are the one-go run's."""
    from biotok_train.ablate import store as REC
    from biotok_train.ablate import slots as S

    monkeypatch.setattr(A, "WORK", tmp_path / "nothing")
    assert A.main(["--dry-run", "--tasks", "e3c", "--merge", str(tmp_path / "x.tar.xz")]) == 2  # before the CPU side
    assert "text.txt: run the CPU side first" in capsys.readouterr().err and not (tmp_path / "nothing").exists()
    assert A.main(["--dry-run", "--tasks", "e3c", "--slots"]) == 2
    assert "text.txt: run the CPU side first" in capsys.readouterr().err
    monkeypatch.setattr(A, "WORK", tmp_path)
    gpu = tmp_path / ".gpu"
    monkeypatch.setattr(A, "GPU_PACK", gpu)
    assert A.main(["--dry-run", "--tasks", "e3c", "--pack"]) == 2  # pack.sh first
    assert "run PACK_CORPORA=" in capsys.readouterr().err
    _pack_sh(data, gpu)
    shutil.rmtree(work / "gpu")  # home keeps the one-go verdicts (down) only; its records come back from slots
    (work / "downstream.json").unlink()
    assert A.main(["--dry-run", "--tasks", "e3c", "--pack"]) == 0
    out = capsys.readouterr().out
    assert "Next slot: pretraining seed 0, " in out and "| 0 | pretrain/tiny/BPE-32k/p0 with what needs it | 3 | no |" in out
    assert "| pretrain | 4 | " in out and "**pretraining seed 0's whole slot takes an estimated " in out  # item 7
    first = _next_command(out)
    assert "--dry-run --tasks e3c --slot 540 --home " in first and '--archive "$OUT/slot.tar.xz"' in first

    (tmp_path / "a-file").write_text("x", encoding="utf-8")  # an archive that cannot be written: refused before any work
    assert A.main(["--dry-run", "--tasks", "e3c", "--slot", "540", "--archive", str(tmp_path / "a-file" / "a.tar.xz")]) == 2
    assert "ablation_gpu_fr: error:" in capsys.readouterr().err and not (work / "gpu").exists()

    out1, out2 = tmp_path / "out1", tmp_path / "out2"
    out1.mkdir(), out2.mkdir()
    assert _device(gpu, tmp_path / "device1", first, out1, kill_after_records=7) == -9  # killed partway
    came = REC.read_archive(out1 / "slot.tar.xz").contents()
    assert 7 <= len(came) < 4 + 4 * 3 + 4 * 2  # some records, not the seed's 24 jobs
    assert A.main(["--dry-run", "--tasks", "e3c", "--merge", str(out1 / "slot.tar.xz")]) == 0
    res = capsys.readouterr()
    assert not (work / "downstream.json").exists() and "Next slot: pretraining seed 0, " in res.out
    cfg = A.gpu_config(work, ("e3c",))
    jobs, keys = S.plan_jobs(cfg)
    home = S.home_records(work / "gpu")
    whole, part = S.done_units(jobs, keys, home)
    assert not part and home and set(home) <= set(came)  # whole units only came home
    cut = [u.name for u in S.done_units(jobs, keys, came)[1]]
    assert all(name in res.err for name in cut)  # each unit cut in the slot is said, and left out

    second = _next_command(res.out)
    assert second != first  # planned from other records at home (its --home)
    assert _device(gpu, tmp_path / "device2", second, out2) == 0  # a fresh machine: the rest of the seed
    again = REC.read_archive(out2 / "slot.tar.xz").contents()
    assert not {u.name for u in whole if u.model} & set(again)  # a model merged home is not trained again
    assert A.main(["--dry-run", "--tasks", "e3c", "--merge", str(out2 / "slot.tar.xz")]) == 0
    res = capsys.readouterr()
    home = S.home_records(work / "gpu")
    assert all(home.get(k) == keys[k] for k in keys)  # every job of the seed counts done at home
    assert "Every job of the GPU side has its record here." in res.out
    merged = json.loads((work / "downstream.json").read_text(encoding="utf-8"))
    assert merged["comparisons"] == down["comparisons"] and merged["floors"] == down["floors"]
    assert merged["pretrain_seeds"] == [0] and len(REC.read_pieces(work / "gpu")) == 2
    page = (work / "page" / "README.md").read_text(encoding="utf-8")
    assert "--merge slot-*.tar.xz" in page and "- Pretraining seeds in these verdicts: 0; from 2 pieces run" in page
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
