"""benchmarks/table9_minilm.py, the Table 9 recipe over ablate: --quick end to end (a tiny base
standing in for MiniLM), and a task name it cannot use refused before any work."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("seqeval")

from benchmarks.experiments import table9_minilm as T  # noqa: E402
from tests.biotok_train.ablate.test_run import base_model  # noqa: E402,F401 (a fixture)


def test_quick_regenerates_the_page_end_to_end(tmp_path, base_model, shared_data):  # noqa: F811
    out = tmp_path / "out"
    code = T.main(["--quick", "--base", str(base_model), "--work", str(tmp_path / "w"), "--out", str(out)])
    assert code == 0
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# Table 9 on a CPU") and f"python -m benchmarks.experiments.table9_minilm --quick --base {base_model}" in readme
    assert "lines excluded" in readme and "## The curve" in readme and "## Costs" in readme
    data = json.loads((out / "ablation.json").read_text(encoding="utf-8"))
    assert [a["name"] for a in data["arms"]] == ["general.general", "continual.general", "transfer-fvt.biotok",
                                                 "transfer-random.biotok"]
    assert data["tasks"]["ncbi-disease"]["type"] == "ner" and {p["step"] for p in data["curve"]} == {0, 2, 4}
    costs = json.loads((out / "costs.json").read_text(encoding="utf-8"))
    assert costs["total_cpu_s"] > 0 and "pretrain/as-base/transfer-fvt.biotok/p0" in costs["jobs"]
    corpus = (tmp_path / "w" / "corpus.txt").read_text(encoding="utf-8").splitlines()
    assert len(corpus) == 400


def test_a_task_it_cannot_use_is_refused_before_any_work(tmp_path, capsys):
    code = T.main(["--quick", "--tasks", "no-such-task", "--base", str(tmp_path), "--work", str(tmp_path / "w"),
                   "--out", str(tmp_path / "out")])
    assert code == 2 and "unknown task 'no-such-task'" in capsys.readouterr().err
    assert not (tmp_path / "w").exists() and not (tmp_path / "out").exists()
