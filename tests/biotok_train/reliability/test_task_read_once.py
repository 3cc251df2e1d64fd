"""Issue 46, item 1: a task is read once. The bytes keyed are the bytes used: a task file edited
while the ablation runs changes nothing of that run (its fine-tunes use the examples read when
the task was keyed), a file written or replaced while it is read is one line and exit 2, and a
record that was not made of its key's bytes is made again, never reused."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from biotok_train.cli import main
from tests._contract import assert_contract

PROG = "biotok-train"
SENT = "Le\tO\npatient\tO\nprésente\tO\nune\tO\nfièvre\tB-SIGN\nélevée\tI-SIGN\n.\tO\n\n"
OTHER = "La\tO\ntoux\tB-SIGN\npersiste\tO\n.\tO\n\n"


def _bio(d: Path, test_sentences: int) -> Path:
    d.mkdir(exist_ok=True)
    for split, n in (("train", 6), ("dev", 2)):
        (d / f"{split}.tsv").write_text(SENT * n, encoding="utf-8")
    (d / "test.tsv").write_text(OTHER * test_sentences, encoding="utf-8")
    return d


def _ablate(base: Path, task: Path, out: Path):
    return CliRunner().invoke(main, [
        "ablate", "--tokenizers", str(base / "tok"), "--corpus", str(base / "c.txt"), "--task", str(task),
        "--size", "tiny", "--budget", "1", "--batch-size", "2", "--seq-len", "32", "--ner-epochs", "1",
        "--ner-max-steps", "1", "--n-words", "5", "--out", str(out), "-q"], prog_name=PROG)


def _finetune_records(out: Path) -> dict[str, dict]:
    return {str(p.relative_to(out)): json.loads(p.read_text(encoding="utf-8"))["result"]
            for p in (out / "jobs" / "finetune").rglob("f*.json") if not p.name.endswith(".cost.json")}


def _key(task: Path) -> str:
    from biotok_train.ablate.keys import task_key
    from biotok_train.tasks import load

    return task_key(str(task), load(str(task)))


def test_a_task_edited_during_the_ablation_is_used_as_it_was_keyed(tmp_path, rel_base, monkeypatch):
    from biotok_train.ablate import jobs

    task, out = _bio(tmp_path / "task", test_sentences=2), tmp_path / "abl"
    old_key = _key(task)
    real = jobs.prepare

    def edit_then_prepare(*args, **kwargs):  # the user edits the task once the run has keyed it
        (task / "test.tsv").write_text(OTHER * 4, encoding="utf-8")
        return real(*args, **kwargs)

    monkeypatch.setattr(jobs, "prepare", edit_then_prepare)
    r = _ablate(rel_base, task, out)
    assert r.exit_code == 0, r.output
    records = _finetune_records(out)
    assert records
    for path, result in records.items():  # each holds the fine-tune of the bytes its key names
        assert f"file-{old_key[:8]}" in path
        assert result["task"] == old_key
        assert len(result["predictions"]) == 2  # the test set as keyed, not the 4 sentences written since

    monkeypatch.setattr(jobs, "prepare", real)
    r = _ablate(rel_base, task, out)  # the next run keys the new bytes and fine-tunes on them
    assert r.exit_code == 0, r.output
    new_key = _key(task)
    assert new_key != old_key
    records = _finetune_records(out)
    for path, result in records.items():
        key = old_key if f"file-{old_key[:8]}" in path else new_key
        assert result["task"] == key
        assert len(result["predictions"]) == (2 if key == old_key else 4)
    assert any(f"file-{new_key[:8]}" in p for p in records)


def test_a_task_file_replaced_while_it_is_read_is_one_line(tmp_path, rel_base, monkeypatch):
    from biotok_train.tasks import ner

    task, out = _bio(tmp_path / "task", test_sentences=2), tmp_path / "abl"
    real = ner.load_path

    def read_then_replace(path):
        data = real(path)
        fresh = task / ".test.tsv.new"
        fresh.write_text(OTHER * 5, encoding="utf-8")
        os.replace(fresh, task / "test.tsv")  # another program replaced the file the reader just read
        return data

    monkeypatch.setattr(ner, "load_path", read_then_replace)
    r = _ablate(rel_base, task, out)
    assert_contract(r, PROG, task / "test.tsv", "changed while it was read")
    assert not out.exists()


def test_a_record_not_made_of_its_keys_bytes_is_made_again(tmp_path):
    from biotok_train.ablate import jobs
    from biotok_train.ablate.engines import pending
    from biotok_train.ablate.jobs import Job
    from biotok_train.ablate.keys import content_keys
    from biotok_train.ablate.store import record_path, write_json

    task = str(_bio(tmp_path / "task", test_sentences=2))
    key = _key(Path(task))

    def job(name: str, task: str, task_key: str) -> Job:
        return Job(name, jobs.finetune, (task, "arms/m", 0, f"runs/{name}", task_key), inputs=task_key)

    plan = [job("user-new", task, key), job("user-old", task, key), job("user-wrong", task, key),
            job("named-old", "e3c", "k-e3c")]
    keys = content_keys(plan)
    made = {"user-new": {"task": key}, "user-old": {},  # before issue 46: no task key, of unknown bytes
            "user-wrong": {"task": "0" * 64}, "named-old": {}}
    for j in plan:
        write_json(record_path(tmp_path, j.key), {"key": j.key, "inputs": keys[j.key],
                                                  "result": {"score": 0.5, **made[j.key]}})
    assert sorted(pending(tmp_path, plan, keys)) == ["named-old", "user-new"]


def test_an_unreadable_task_folder_is_said_as_an_input(tmp_path, rel_base, monkeypatch):
    """Issue 46, item 7: the line names the task as typed and gives an input's advice, not an output's."""
    import errno

    from biotok_train.tasks import ner

    task, out = _bio(tmp_path / "task", test_sentences=2), tmp_path / "abl"

    def unreadable(path):  # what a folder without read permission gives a non-root user
        raise PermissionError(errno.EACCES, "Permission denied", str(task))

    monkeypatch.setattr(ner, "load_path", unreadable)
    line = assert_contract(_ablate(rel_base, task, out), PROG, task, "permission denied")
    assert "output" not in line and "readable" in line
    assert not out.exists()


def test_os_error_advice_follows_what_was_done():
    import errno

    from biotok.output import os_error_message

    e = PermissionError(errno.EACCES, "Permission denied", "x")
    assert "output folder you may write to" in os_error_message(e, "out", action="write")
    assert "output" not in os_error_message(e, "task", action="read")
    assert "an input" in os_error_message(e, "x", action="read or write")
