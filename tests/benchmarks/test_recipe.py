"""benchmarks/recipe.py: what the recipes that are not an ablation share. A bad input is one line and
exit 2 before any work, a Flag's bounds are checked as typed, a page is rewritten from its JSON
alone, and the command a page names leaves every default out."""

from __future__ import annotations

import json

import pytest

from benchmarks import recipe as R
from biotok.errors import ConfigError

OPTIONS = {"--seeds": R.Flag(3, "the number of seeds", low=1, high=10), "--steps": R.Flag(100, "the steps", low=1),
           "--name": R.Flag(None, "a name", str), "--fast": R.Flag(False, "a switch"),
           "--engine": R.Flag("local", "who runs it", choices=("local", "ray"))}


def test_flags_parse_with_their_defaults_and_types():
    got = []
    assert R.command_line("toy", "doc", OPTIONS, got.append, ["--seeds", "4", "--fast"]) == 0
    a = got[0]
    assert (a.seeds, a.steps, a.name, a.fast, a.engine) == (4, 100, None, True, "local")
    assert a.command == "python -m benchmarks.experiments.toy --seeds 4 --fast"  # as typed: what made the page


@pytest.mark.parametrize("args, line", [
    (["--seeds", "0"], "toy: error: --seeds 0: the number of seeds must be between 1 and 10"),
    (["--seeds", "11"], "toy: error: --seeds 11: the number of seeds must be between 1 and 10"),
    (["--steps", "-5"], "toy: error: --steps -5: the steps must be at least 1"),
])
def test_a_flag_out_of_bounds_is_one_line_and_exit_2_before_any_work(args, line, capsys):
    ran = []
    assert R.command_line("toy", "doc", OPTIONS, ran.append, args) == 2
    assert ran == [] and capsys.readouterr().err.strip().splitlines() == [line]


def test_a_bad_input_or_a_full_disk_in_the_run_is_one_line(capsys):
    def config_error(a):
        raise ConfigError("--x 3: give 2")

    def full_disk(a):
        raise OSError(28, "No space left on device")

    assert R.command_line("toy", "doc", {}, config_error, []) == 2
    assert capsys.readouterr().err == "toy: error: --x 3: give 2\n"
    assert R.command_line("toy", "doc", {}, full_disk, []) == 2
    assert "No space left on device" in capsys.readouterr().err


def test_int_list_and_refuse_name_the_flag():
    assert R.int_list(" 250, 500,", "--curve", "steps") == (250, 500)
    with pytest.raises(ConfigError, match=r"--curve 'a,b': give steps"):
        R.int_list("a,b", "--curve", "steps")
    R.refuse([(True, "never")])
    with pytest.raises(ConfigError, match="^second$"):
        R.refuse([(True, "first"), (False, "second"), (False, "third")])


def test_command_for_leaves_the_defaults_out():
    defaults = {"--steps": 400, "--seeds": (0, 1, 2), "--modes": ("raw", "fair")}
    values = {"--quick": False, "--steps": 400, "--seeds": (0, 1, 2), "--modes": ("raw", "fair")}
    assert R.command_for("probe_fr", values, defaults) == "python -m benchmarks.experiments.probe_fr"
    values |= {"--quick": True, "--steps": 800, "--modes": ("fair",)}
    assert R.command_for("probe_fr", values, defaults) == \
        "python -m benchmarks.experiments.probe_fr --quick --steps 800 --modes fair"


def test_table_aligns_each_column():
    assert R.table(("a", "b"), "lr", [("x", 1), ("y", 2)]) == ["| a | b |", "|---|---:|", "| x | 1 |", "| y | 2 |"]


PAGE = R.Page("toy", "doc", lambda a: a.default_root, "data/results.json", "README.md",
              lambda a, root: {"n": a.n, "root": root.name}, lambda d: f"# {d['n']}\n",
              {"--n": R.Flag(1, "a number", low=0), "--default-root": R.Flag(None, "the default folder", str)})


def test_page_writes_its_json_and_renders_it_again_from_the_json_alone(tmp_path, capsys):
    assert R.page_main(PAGE, ["--n", "3", "--out", str(tmp_path / "p")]) == 0
    data = tmp_path / "p" / "data" / "results.json"
    assert json.loads(data.read_text(encoding="utf-8")) == {"n": 3, "root": "p"}
    assert data.read_text(encoding="utf-8") == R.dumps({"n": 3, "root": "p"})
    assert (tmp_path / "p" / "README.md").read_text(encoding="utf-8") == "# 3\n"
    assert R.page_main(PAGE, ["--from-json", str(data), "--default-root", str(tmp_path / "q")]) == 0
    assert (tmp_path / "q" / "README.md").read_text(encoding="utf-8") == "# 3\n"
    assert not (tmp_path / "q" / "data").exists()  # only the page: the JSON is its input
    capsys.readouterr()
    assert R.page_main(PAGE, ["--from-json", str(tmp_path / "none.json"), "--out", str(tmp_path / "r")]) == 2
    assert "none.json not found" in capsys.readouterr().err and not (tmp_path / "r").exists()
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    assert R.page_main(PAGE, ["--from-json", str(tmp_path / "bad.json"), "--out", str(tmp_path / "r")]) == 2
    assert "not a page's JSON" in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_timed_each_runs_in_turn():
    order = []
    got = R.timed_each({"a": lambda: order.append("a") or 1, "b": lambda: order.append("b") or 2})
    assert order == ["a", "b"] and [v for v, _ in got.values()] == [1, 2] and all(s >= 0 for _, s in got.values())


def test_known_tasks_refuses_an_unknown_name():
    from biotok.errors import BiotokError

    assert R.known_tasks(["e3c"]) == ["e3c"]
    with pytest.raises(BiotokError, match="no-such-task"):
        R.known_tasks(["e3c", "no-such-task"])
