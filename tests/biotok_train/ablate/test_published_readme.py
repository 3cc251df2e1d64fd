"""ablate.render.published_readme: the README of a published CPU ablation, every sentence from the report."""

import json
from types import SimpleNamespace

from biotok_train.ablate.render import published_readme


def _report(beats: bool):
    seeds = {"mean": 0.5, "std": 0.1, "n": 2, "values": [0.4, 0.6]}
    arm = SimpleNamespace(name="A", mlm_words=1000, mlm={"top1": seeds}, metrics={"e3c": seeds}, floors={"e3c": seeds})
    return SimpleNamespace(arms=[arm], tasks={"e3c": {"name": "e3c", "metric": "entity_f1", "n_test": 10}},
                           mlm_floors=[{"arm": "A", "word": "de", "reference": 0.06, "beats_floor": beats}],
                           floors=[{"arm": "A", "task": "e3c", "beats_floor": beats}], sentences=["A verdict."])


def test_every_sentence_follows_the_floors(tmp_path):
    (tmp_path / "timings.json").write_text(json.dumps({"pretrain": 600, "finetune": 300}))
    text = published_readme(_report(True), tmp_path, title="T", command="python -m x", setup="Setup: s", cpu_count=2)
    assert "```bash\npython -m x\n```" in text
    assert "The parts timed in `timings.json` add up to 15 minutes on a 2-core CPU" in text
    assert "every arm beats it." in text and "Every pretrained arm beats its random-init floor on e3c" in text
    assert "**In one line**: every pretrained arm beats every floor" in text and "- A verdict." in text
    text = published_readme(_report(False), tmp_path, title="T", command="c", setup="s", cpu_count=2)
    assert "0 of 1 arms beat it." in text and "0 of 1 pretrained arms beat their random-init floor on e3c" in text
    assert "**In one line**: no pretrained arm beats any floor" in text


def test_cost_from_costs_json_when_no_timings(tmp_path):
    (tmp_path / "costs.json").write_text(json.dumps({"format": "biotok-costs/1", "total_cpu_s": 1800}))
    text = published_readme(_report(True), tmp_path, title="T", command="c", setup="s", cpu_count=2)
    assert "The jobs' CPU time in `costs.json` adds up to 30 minutes on a 2-core CPU" in text
