"""``biotok cost`` with an impossible size or speed: one error line and exit 2.

A tiny --tokens-per-second printed ``inf`` GPU-hours (``null`` in --json), a huge --epochs a
300-digit token count or an OverflowError traceback. Now every estimate must be a finite number
below 2^63, or the command says which options to check.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from biotok.cli import main
from tests._contract import assert_contract


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="biotok")


@pytest.mark.parametrize("args", [
    ("--tokens-per-second", "1e-320"), ("--tokens-per-second", "1e-320", "--json"),
    ("--tokens-per-second", "1e-300"), ("--epochs", "1e308"), ("--epochs", "1e300", "--json"),
    ("--epochs", "1e13", "--corpus-size", "1000000TB", "--json"),
], ids=["tps-denormal", "tps-denormal-json", "tps-tiny", "epochs-overflow", "epochs-huge-json", "tokens-past-2^63"])
def test_an_impossible_estimate_is_one_line(tiny_wordpiece, sample_corpus, args):
    r = run("cost", tiny_wordpiece, "--corpus", sample_corpus, *args)
    line = assert_contract(r, "biotok", "--tokens-per-second", "--epochs", "--corpus-size")
    for word in ("inf", "nan", "null"):
        assert word not in line.lower().replace("information", "")


def test_a_large_but_possible_estimate_is_printed_in_numbers(tiny_wordpiece, sample_corpus):
    r = run("cost", tiny_wordpiece, "--corpus", sample_corpus, "--corpus-size", "900000TB", "--tokens-per-second", "0.001",
            "--json")
    assert r.exit_code == 0, r.output
    c = json.loads(r.stdout)["costs"][0]
    assert 0 < c["tokens_total"] <= 2**63 - 1 and c["gpu_hours"] == pytest.approx(c["tokens_total"] / 0.001 / 3600)
    assert "null" not in r.stdout and "Infinity" not in r.stdout and "NaN" not in r.stdout
