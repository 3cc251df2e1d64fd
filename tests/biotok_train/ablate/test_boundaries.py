"""One place for each idea, read from the source: no code outside ``ablate.keys`` parses a job key
(``Key.parse`` does), and no code outside ``ablate.store`` opens an archive (``tarfile``: the store's
bounded reader is the only one of an archive from another machine)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
# the engine, its command and the recipes over it
SCOPE = [*sorted((REPO / "biotok_train" / "ablate").glob("*.py")), REPO / "biotok_train" / "cli" / "ablate.py",
         *sorted((REPO / "benchmarks" / "experiments").glob("*.py"))]
# a job key taken apart by hand: split on "/", a regex of a seed or step part, a record's name cut out of jobs/
PARSING = re.compile(r"""split\(\s*["']/["']|/[pfk]\(\\d|/[pfk]\\d|len\(\s*["']jobs/["']\s*\)""")
NOT_KEYS = {  # what these split is not a job key
    "time_to_verdict.py": "timings.json's ARM/seedN of the probe and SIZE/ARM/... of ablations before costs.json",
}
OTHER_ARCHIVES = {"table9_minilm.py": "the WMT corpus's own tarball, an input, not records"}


def _rel(p: Path) -> str:
    return p.relative_to(REPO).as_posix()


def test_the_scope_is_what_it_says():
    names = {p.name for p in SCOPE}
    assert {"keys.py", "store.py", "slots.py", "estimate.py", "ablation_gpu_fr.py", "transfer_cpu.py"} <= names


@pytest.mark.parametrize("path", [p for p in SCOPE if p.name != "keys.py"], ids=_rel)
def test_no_code_outside_keys_parses_a_job_key(path):
    if path.name in NOT_KEYS:
        return
    hits = [f"{_rel(path)}:{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if PARSING.search(line)]
    assert not hits, "a job key parsed outside ablate.keys (use Key.parse):\n" + "\n".join(hits)


@pytest.mark.parametrize("path", [p for p in SCOPE if p.name != "store.py"], ids=_rel)
def test_no_code_outside_store_opens_an_archive(path):
    if path.name in OTHER_ARCHIVES:
        return
    hits = [f"{_rel(path)}:{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(r"\btarfile\b", line)]
    assert not hits, "an archive opened outside ablate.store (use store.read_archive):\n" + "\n".join(hits)


def test_the_check_finds_what_it_forbids():
    for line in ('kind, *rest = key.split("/")', r'm = re.search(r"/p(\d+)(?:/|$)", key)',
                 'key = m.name[len("jobs/"):]', r're.split(r"/p\d+(?:/|$)", u.name)'):
        assert PARSING.search(line), line
