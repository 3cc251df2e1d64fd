"""--push-to-hub on the training commands: the finished folder goes to a local Hub (the server of
tests/biotok/test_hub.py, 127.0.0.1 only), without the training state; refusals come before work."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from biotok_train.cli import main  # noqa: E402
from tests.biotok.test_hub import hub  # noqa: E402,F401 (a fixture)


@pytest.fixture()
def data(sample_lines, tiny_wordpiece, tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(sample_lines[:40]) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["prepare", str(tmp_path / "c.txt"), "--tokenizer", str(tiny_wordpiece),
                                  "--seq-len", "32", "--out", str(tmp_path / "data"), "--no-progress"])
    assert r.exit_code == 0, r.output
    return tmp_path / "data"


def test_mlm_and_transfer_push_to_hub(hub, data, tiny_wordpiece, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["mlm", str(data), "--steps", "1", "--batch-size", "2", "--device", "cpu",
                                  "--out", "runs/bert-tiny", "--no-progress", "--report-to", "none",
                                  "--push-to-hub", "me/bert-tiny"])
    assert r.exit_code == 0, r.output
    run, stored = tmp_path / "runs" / "bert-tiny", hub.repos["me/bert-tiny"]
    assert stored["model.safetensors"] == (run / "model.safetensors").read_bytes()
    assert {"config.json", "tokenizer.json", "README.md"} <= set(stored)
    assert not [n for n in stored if n.startswith("checkpoint/")] and (run / "checkpoint").is_dir()
    assert 'model="me/bert-tiny"' in stored["README.md"].decode() and "pushed" in r.output
    r = CliRunner().invoke(main, ["transfer", "runs/bert-tiny", "-t", str(tiny_wordpiece), "--out", "runs/moved",
                                  "--push-to-hub", "me/moved"])
    assert r.exit_code == 0, r.output
    assert hub.repos["me/moved"]["transfer.json"] == (tmp_path / "runs" / "moved" / "transfer.json").read_bytes()


def test_push_refusals_come_before_training(hub, data, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-home"))
    r = CliRunner().invoke(main, ["mlm", str(data), "--steps", "1", "--batch-size", "2", "--device", "cpu",
                                  "--out", str(tmp_path / "r"), "--push-to-hub", "me/r"])
    assert r.exit_code == 2 and "no Hugging Face token" in r.output and not (tmp_path / "r").exists()
    monkeypatch.setenv("HF_TOKEN", hub.token)
    r = CliRunner().invoke(main, ["finetune", str(data), "--task", "x", "--push-to-hub", "me/f"])
    assert r.exit_code == 2 and "--push-to-hub needs --out" in r.output
    assert hub.requests == []
