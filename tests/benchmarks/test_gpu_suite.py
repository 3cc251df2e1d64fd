"""benchmarks/speed/gpu_suite (python -m benchmarks.speed.gpu_suite): the config and command line, the results JSON and the
README tables, the packed-rows check itself, and the whole --dry-run on CPU (slow)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks.speed import gpu_suite as G
from benchmarks.speed.gpu_suite import equivalence as E
from tests.conftest import REPO



def test_the_suite_uses_the_one_mfu_formula_and_peak_table():
    from biotok_train.pretrain import flops

    assert (G.flops_per_token, G.mfu, G.peak_tflops) == (flops.flops_per_token, flops.mfu, flops.peak_tflops)
    assert G.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"


def test_config_from_args():
    cfg = G.config_from_args([])
    assert cfg == G.SuiteConfig() and cfg.seq_lens == (128,) and cfg.size == "base" and cfg.minutes == 8
    toy = G.config_from_args(["--dry-run", "--out", "x"])
    assert toy.dry_run and toy.size == "tiny" and toy.compile_backend == "aot_eager" and not toy.compile
    assert toy.out == "x"
    mine = G.config_from_args(["--dry-run", "--check-steps", "2", "--seq-lens", "16", "--batch-sizes", "2"])
    assert mine.check_steps == 2 and mine.seq_lens == (16,) and mine.size == "tiny"
    with pytest.raises(SystemExit) as e:
        G.config_from_args(["--only", "speed"])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        G.config_from_args(["--seq-lens", "128,512", "--batch-sizes", "8"])


def test_result_path_and_write_json(tmp_path):
    gpu = {"type": "cuda", "name": "NVIDIA H100 80GB HBM3"}
    assert G.result_path(tmp_path, gpu, False) == tmp_path / "nvidia-h100-80gb-hbm3.json"
    assert G.result_path(tmp_path, {"type": "cpu", "name": "CPU (x86_64)"}, True).name == "dry-run-cpu.json"
    p = G.write_json(tmp_path / "r.json", {"a": 1}, force=False)
    with pytest.raises(FileExistsError):
        G.write_json(p, {"a": 2}, force=False)
    G.write_json(p, {"a": 2}, force=True)
    assert json.loads(p.read_text()) == {"a": 2} and not list(tmp_path.glob(".*tmp"))


def _result(name: str, dry_run: bool = False) -> dict:
    checks = [{"arch": a, "variant": v, "max_rel_diff": 1e-5, "passed": True, "skipped": None}
              for a in ("bert", "albert", "electra") for v in G.TOLERANCES]
    run = {"seq_len": 128, "batch_size": 128, "biotok_tokens_per_s": 800_000.0, "hf_tokens_per_s": 400_000.0,
           "ratio": 2.0, "biotok_mfu": 0.44, "hf_mfu": 0.22, "met_ratio": True, "met_mfu": True}
    return {"schema": G.SCHEMA, "dry_run": dry_run, "device": {"name": name}, "versions": {"torch": "2.13"},
            "config": {"check_size": "small"}, "started_utc": "2026-11-23T10:00:00Z", "wall_s": 1200.0,
            "command": "python -m benchmarks.speed.gpu_suite",
            "steps": {"equivalence": {"status": "passed", "checks": checks},
                      "throughput": {"status": "passed", "size": "base", "runs": [run]},
                      "ablation": {"status": "passed", "size": "small", "budget": 3000, "task": "e3c", "wall_s": 400,
                                   "legs": [{"name": "camemberta-base", "mlm_top1": 0.31, "f1": 0.55}]}}}


def test_readme_tables(tmp_path):
    results = tmp_path / "gpu"
    results.mkdir()
    (results / "h100.json").write_text(json.dumps(_result("NVIDIA H100 80GB HBM3")), encoding="utf-8")
    (results / "dry-run-cpu.json").write_text(json.dumps(_result("CPU", dry_run=True)), encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text("# Benchmarks\n\ntext before\n", encoding="utf-8")
    G.update_readme(readme, results)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\ntext before\n") and G.README_BEGIN in text and G.README_END in text
    assert "| NVIDIA H100 80GB HBM3 | bert-base | 128 | 128 | 800,000 | 400,000 | **2.00** | 44.0 % | 22.0 % | yes |" in text
    assert "| NVIDIA H100 80GB HBM3 | bert-small | 1.0e-05 ✓ |" in text and "CPU" not in text.split(G.README_BEGIN)[1]
    # a second run replaces the block, keeps the rest
    readme.write_text(text + "\ntext after\n", encoding="utf-8")
    G.update_readme(readme, results)
    again = readme.read_text(encoding="utf-8")
    assert again.count(G.README_BEGIN) == 1 and again.endswith("text after\n")
    assert "No GPU run yet" in G.render_tables([_result("CPU", dry_run=True)])


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    from biotok.config import NormalizeConfig, TrainConfig
    from biotok.train import train_tokenizer
    from biotok_train.config import PrepareConfig
    from biotok_train.pretrain.prepare import prepare

    d = tmp_path_factory.mktemp("suite")
    corpus = REPO / "corpora" / "sample" / "e3c_pamj_fr.txt"
    train_tokenizer([corpus], TrainConfig(algo="unigram", vocab_size=800, normalize=NormalizeConfig(lowercase=True)),
                    d / "tok")
    return prepare([str(corpus)], d / "tok", PrepareConfig(seq_len=32), d / "data", progress=False).path


def test_packed_check_catches_a_padding_leak(tiny_data):
    """The packed-rows check passes on the real code and fails when padding is attended to."""
    import torch

    from biotok_train.pretrain.models import Vocab, build
    from biotok_train.pretrain.packed import PackedData

    packed = PackedData(tiny_data)
    vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    torch.manual_seed(0)
    module = build("mlm", "bert", "tiny", vocab, packed.seq_len)
    state = {k: v.clone() for k, v in module.state_dict().items()}
    batch = G.fixed_batches(tiny_data, 1, 4, "bert")[0]
    lengths = [32, 24, 16, 8]
    whole, joined = E._packed_losses(module, state, batch, lengths, packed.pad_id, torch.device("cpu"), "bert")
    assert abs(whole - joined) / joined < G.TOLERANCES["packed"]

    real_rows = E._rows

    def leaky(b, lens, pad_id):  # pads the ids but leaves the attention mask on: padding leaks in
        out = real_rows(b, lens, pad_id)
        out["attention_mask"] = torch.ones_like(out["attention_mask"])
        return out

    assert E._packed_hidden(module, real_rows(batch, lengths, packed.pad_id), lengths, torch.device("cpu")) \
        < G.TOLERANCES["packed"]
    # at initialisation a leak barely moves the loss (attention is nearly uniform) ...
    leak = leaky(batch, lengths, packed.pad_id)
    # ... but the hidden states at real positions show it
    assert E._packed_hidden(module, leak, lengths, torch.device("cpu")) > 100 * G.TOLERANCES["packed"]


def test_fixed_gumbel_noise_is_restored(tiny_data):
    import torch

    from biotok_train.pretrain import electra

    original = electra.gumbel_sample
    logits = torch.randn(5, 800)
    with G.fixed_gumbel_noise(800):
        a, b = electra.gumbel_sample(logits), electra.gumbel_sample(logits)
        assert torch.equal(a, b)  # the same replacements every call: comparable variants
    assert electra.gumbel_sample is original


@pytest.mark.slow  # several minutes on a shared 2-core CPU
def test_dry_run_on_cpu(tmp_path):
    """Every step at toy size on CPU: exit 0, the JSON says what ran, what was skipped and why."""
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.speed.gpu_suite", "--dry-run", "--out", str(out),
                           "--work", str(tmp_path / "work")], capture_output=True, text=True, timeout=1800, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    r = json.loads((out / "dry-run-cpu.json").read_text(encoding="utf-8"))
    assert r["schema"] == G.SCHEMA and r["dry_run"] and r["passed"] and r["device"]["type"] == "cpu"
    assert {k: v["status"] for k, v in r["steps"].items()} == dict.fromkeys(G.STEPS, "passed")
    checks = r["steps"]["equivalence"]["checks"]
    assert {(c["arch"], c["variant"]) for c in checks} == {(a, v) for a in ("bert", "albert", "electra")
                                                           for v in G.TOLERANCES}
    assert all(c["passed"] for c in checks) and len(r["steps"]["equivalence"]["loop_smoke"]) == 3
    assert [x["seq_len"] for x in r["steps"]["throughput"]["runs"]] == [32, 64]
    assert len(r["steps"]["ablation"]["legs"]) == 2 and r["steps"]["ablation"]["verdicts"]
    whys = " ".join(s["why"] for s in r["skipped"])
    assert "compile" in whys and "toy" in whys
    # the README is never touched by a dry run
    assert "proc" and not (out / "README.md").exists()


def test_the_default_run_fits_8_minutes_by_the_measured_times():
    cfg = G.config_from_args([])
    assert cfg.planned_s() <= 8 * 60 and cfg.ablation_budget >= 200
    assert [s for s in G.STEPS] == ["throughput", "equivalence", "profile", "ablation"]
    more = G.config_from_args(["--minutes", "16"])
    assert more.seq_lens == (128, 512) and more.check_steps == 6 and more.planned_s() <= 16 * 60
    assert more.ablation_budget > cfg.ablation_budget
    mine = G.config_from_args(["--minutes", "16", "--seq-lens", "128", "--batch-sizes", "64", "--ablation-budget", "300"])
    assert mine.seq_lens == (128,) and mine.batch_sizes == (64,) and mine.ablation_budget == 300  # explicit sizes win


def _fake_inputs(cfg, work):
    return "tok", "corpus", ("a", "b"), "task", []


def test_the_json_is_written_after_every_step_and_a_cut_run_keeps_it(tmp_path, monkeypatch):
    from benchmarks.speed.gpu_suite import run as R

    done = []

    def step(name, cfg, *a):
        if name == "profile":
            raise KeyboardInterrupt  # the slot ends here
        done.append(name)
        return G.StepResult(status="passed", data={"n": len(done)})

    monkeypatch.setattr(R, "_inputs", _fake_inputs)
    monkeypatch.setattr(R, "_run_step", step)
    cfg = G.SuiteConfig(dry_run=True, out=str(tmp_path / "out"), device="cpu", update_readme=False)
    with pytest.raises(KeyboardInterrupt):
        R.run_suite(cfg)
    r = json.loads((tmp_path / "out" / "dry-run-cpu.json").read_text(encoding="utf-8"))
    assert not r["complete"] and r["passed"] is None and list(r["steps"]) == ["throughput", "equivalence"]
    assert r["steps"]["equivalence"]["n"] == 2


def test_a_step_that_would_not_fit_is_skipped_and_said_so(tmp_path, monkeypatch):
    from benchmarks.speed.gpu_suite import run as R

    monkeypatch.setattr(R, "_inputs", _fake_inputs)
    monkeypatch.setattr(R, "_run_step", lambda name, *a: G.StepResult(status="passed"))
    cfg = G.SuiteConfig(out=str(tmp_path), device="cpu", update_readme=False, minutes=1.0, only=("profile", "ablation"))
    r, _ = R.run_suite(cfg)
    assert list(r["steps"]) == ["profile"] and r["complete"] and r["passed"]
    assert any(s["what"] == "ablation" and "would not fit" in s["why"] for s in r["skipped"])


def test_a_failed_step_records_its_root_cause():
    from benchmarks.speed.gpu_suite import run as R

    def boom():
        try:
            raise RuntimeError("SymIntArrayRef expected to contain only concrete integers")
        except RuntimeError as e:
            raise ValueError("BackendCompilerFailed: backend='inductor' raised:\n(long advice)") from e

    res = R._timed("x", boom)
    assert res.status == "error" and res.why.startswith("RuntimeError: SymIntArrayRef expected")
    assert res.data["error"].startswith("ValueError: BackendCompilerFailed")


def test_the_profile_step_names_the_top_operators_of_the_loop_step(tiny_data, tmp_path):
    import torch

    cfg = G.SuiteConfig(dry_run=True).toy()
    res = G.profile_step(cfg, tiny_data, torch.device("cpu"), tmp_path)
    assert res.status == "passed" and len(res.data["modes"]) == 1  # CPU: eager only
    mode = res.data["modes"][0]
    assert mode["steps"] == cfg.profile_steps and mode["step_ms_median"] > 0 and mode["gpu_busy_fraction"] is None
    ops = [o["op"] for o in mode["top_ops"]]
    assert 0 < len(ops) <= 15 and any("mm" in o or "linear" in o for o in ops) and "Self CPU" in mode["table"]


def test_the_ablation_step_reports_each_arms_pretraining_speed(tmp_path):
    from benchmarks.speed.gpu_suite.ablation import pretraining_speed

    run = tmp_path / "ablation" / "runs" / "arm-a"
    run.mkdir(parents=True)
    rows = [{"step": 10, "time": 100.0, "tokens": 100, "tokens_per_s": 1.0, "mfu": None},
            {"step": 20, "time": 100.05, "tokens": 200, "tokens_per_s": 500.0, "mfu": 0.2, "graphs": 2},
            {"step": 30, "time": 100.2, "tokens": 300, "tokens_per_s": 700.0, "mfu": 0.3, "graphs": 2}]
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    (p,) = pretraining_speed(tmp_path / "ablation")
    assert p["run"] == "runs/arm-a" and p["steps"] == 30 and p["tokens_per_step"] == 10
    assert p["tokens_per_s_median"] == 600.0 and p["steps_per_s_median"] == 60.0 and p["mfu_median"] == 0.25
    assert p["steps_per_s_overall"] == pytest.approx(100.0) and p["graphs"] == 2
    assert p["speedup_vs_h200_eager"] == [pytest.approx(60 / 45), pytest.approx(1.0)]
