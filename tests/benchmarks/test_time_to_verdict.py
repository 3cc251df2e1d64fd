"""benchmarks/experiments/time_to_verdict.py: the table is computed from each experiment's own files."""

from __future__ import annotations

import json

from benchmarks.experiments import time_to_verdict as V


def _write(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


def test_table_from_the_published_files(tmp_path):
    res = tmp_path / "results"
    _write(res / "table9-minilm-cpu" / "ablation.json", {
        "jobs": 10, "pending": ["x"], "costs": {"total_cpu_s": 1200.0, "by_arm": {
            "general": {"pretrain_s": 0.0, "finetune_s": 300.0, "heldout_s": 0.0},
            "continual": {"pretrain_s": 600.0, "finetune_s": 240.0, "heldout_s": 60.0}}}})
    _write(res / "probe-fr" / "fair" / "timings.json", {
        f"{arm}/seed{s}": {"train_cpu_s": 100.0, "eval_cpu_s": 20.0} for arm in ("a", "b") for s in (0, 1, 2)})
    _write(res / "minilm-fr-cpu" / "timings.json", {"as-base/continual.m/p0/mlm": 600.0, "as-base/floor.m/e3c/f0": 60.0})
    _write(res / "plateau-fr" / "plateau.json", {"max_steps": 4000, "every": 2000, "vocabularies": {
        "a": [{"step": 2000, "train_cpu_s": 600.0}, {"step": 4000, "train_cpu_s": 600.0}],
        "b": [{"step": 2000, "train_cpu_s": 300.0}]}})
    _write(res / "ablation-cpu-4000" / "timings.json", {"tiny/a/p0/pretrain": 0.5, "tiny/b/e3c/f0": 120.0, "probe": 60.0})
    t = V.table(res)
    assert "| [table9-minilm-cpu](../docs/results/table9-minilm-cpu/) | 20 | CPU | 9 of 10 jobs; per arm: general 5, continual 15 |" in t
    assert "| [probe-fr (fair)](../docs/results/probe-fr/) | 12 | CPU | 2 arms x 3 seed(s); per arm: a 6, b 6 |" in t
    assert "| [minilm-fr-cpu](../docs/results/minilm-fr-cpu/) | 11 | wall | per arm: continual.m 10, floor.m 1 |" in t
    assert "| [plateau-fr](../docs/results/plateau-fr/) | 25 | CPU | training only, 4,000 steps per vocabulary; per vocabulary: a 20, b 5 |" in t
    assert "| [ablation-cpu-4000](../docs/results/ablation-cpu-4000/) | 3 | wall | per arm: a 0, b 2, probe 1 |" in t
    assert "probe-fr (raw)" not in t  # not run: left out


def test_an_ablations_costs_json_is_read_first(tmp_path):
    """costs.json (what ablate writes) wins over the older files of the same folder."""
    res = tmp_path / "results"
    _write(res / "minilm-fr-cpu" / "timings.json", {"as-base/continual.m/p0/mlm": 600.0})
    _write(res / "minilm-fr-cpu" / "costs.json", {
        "format": "biotok-costs/1", "total_cpu_s": 1800.0, "total_wall_s": 2000.0,
        "by_arm": {"continual.m": {"pretrain": 1200.0}, "general.m": {"finetune": 600.0}},
        "jobs": {"pretrain/as-base/continual.m/p0": {"cpu_s": 1200.0, "wall_s": 1300.0, "device": "cpu"},
                 "finetune/as-base/general.m/p0/e3c/f0": {"cpu_s": 600.0, "wall_s": 700.0, "device": "cpu"}}})
    _write(res / "plateau-fr" / "plateau.json", {"max_steps": 4000, "every": 2000, "vocabularies": {"a": []}})
    _write(res / "plateau-fr" / "costs.json", {"format": "biotok-costs/1", "total_cpu_s": 600.0, "by_arm": {
        "a": {"pretrain": 480.0, "evaluate": 120.0}}, "jobs": {"pretrain/tiny/a/p0": {"cpu_s": 480.0}}})
    t = V.table(res)
    assert "| [minilm-fr-cpu](../docs/results/minilm-fr-cpu/) | 30 | CPU | 2 jobs; per arm: continual.m 20, general.m 10 |" in t
    assert "| [plateau-fr](../docs/results/plateau-fr/) | 10 | CPU | 1 jobs; per arm: a 10 |" in t


def test_rewrite_replaces_only_the_table(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{V.START}\nold\n{V.END}\nafter\n", encoding="utf-8")
    out = V.rewrite(readme, tmp_path / "none")
    assert out.startswith("before\n") and out.endswith("after\n") and "old" not in out and "| experiment |" in out
