"""biotok.card: every tokenizer artifact carries a model card whose front matter parses."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from biotok.card import ModelCard, parse_front_matter
from biotok.cli import main


def test_render_and_parse_front_matter():
    card = ModelCard("t", "summary", {"language": ["fr"], "license": "apache-2.0", "tags": ["a", "b: c"],
                                      "base_model": None, "datasets": []}, [("S", "body"), ("Empty", " ")])
    text = card.render()
    meta = parse_front_matter(text)
    assert meta == {"language": ["fr"], "license": "apache-2.0", "tags": ["a", "b: c"]}
    assert "## S\n\nbody" in text and "## Empty" not in text


def test_tokenizer_artifact_card_from_the_cli(tmp_path, sample_corpus):
    out = tmp_path / "tok"
    args = ["train", str(sample_corpus), "--vocab-size", "500", "--out", str(out), "--force"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    text = (out / "README.md").read_text(encoding="utf-8")
    meta = parse_front_matter(text)
    assert meta["library_name"] == "transformers" and "biotok" in meta["tags"]
    assert "biotok train " + str(sample_corpus) in text  # the exact command
    import hashlib

    assert hashlib.sha256(sample_corpus.read_bytes()).hexdigest() in text
    # byte-identical for the same inputs
    assert CliRunner().invoke(main, args).exit_code == 0
    assert (out / "README.md").read_text(encoding="utf-8") == text


# --- Hub-ready cards (issue 39 item 4) ---------------------------------------------------------------
def _python_blocks(text: str) -> list[str]:
    from markdown_it import MarkdownIt

    return [t.content for t in MarkdownIt("commonmark").parse(text.split("---\n", 2)[2])
            if t.type == "fence" and t.info == "python"]


def test_tokenizer_card_title_snippet_and_path_as_given(tmp_path, sample_corpus, monkeypatch):
    """The title is the folder's name unescaped (no ``my\\-tok``); the snippet loads the folder from
    where the user wrote it (a relative path, not its bare name), and it runs there."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["train", str(sample_corpus), "--vocab-size", "300", "--out", "toks/my-tok_v2", "-q"])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "toks" / "my-tok_v2" / "README.md").read_text(encoding="utf-8")
    assert "\n# my-tok_v2: a biotok " in text
    (snippet,) = _python_blocks(text)
    assert 'AutoTokenizer.from_pretrained("toks/my-tok_v2")' in snippet
    pytest.importorskip("transformers")
    scope: dict = {}
    exec(snippet.replace("tok.tokenize(", "pieces = tok.tokenize("), scope)  # noqa: S102 - the card's own snippet
    assert scope["pieces"] and all(isinstance(p, str) for p in scope["pieces"])


def test_md_text_escapes_markup_but_not_plain_names():
    from markdown_it import MarkdownIt

    from biotok.card import md_text

    assert md_text("bert-tiny") == "bert-tiny" and md_text("run_1.5+x") == "run_1.5+x"
    for hostile in ["x\n```\n<img src=x onerror=alert(1)>", "# a *b* [c](d) `e` _f_ ~~g~~ | h", "<b>&amp;</b>"]:
        html = MarkdownIt("commonmark").enable("strikethrough").enable("table").render(f"# {md_text(hostile)}\n")
        assert html.count("<h1>") == 1 and html.count("\n") == 1  # one heading, one line
        for tag in ("<img", "<code", "<em", "<a ", "<b>", "<s>", "<del"):
            assert tag not in html, (hostile, html)


@pytest.mark.parametrize("name, expected", [
    ("almanach/camembert-base", "almanach/camembert-base"),  # a Hub id
    ("camembert", "almanach/camembert-base"),  # a biotok alias: its repository
    ("runs/bert-tiny", None),  # exists here: a local folder, not a Hub id
    ("/abs/path/model", None), ("./x", None), ("../x/y", None), ("a/b/c", None), ("bert-tiny", None), (None, None),
])
def test_hub_id_only_for_repository_ids(tmp_path, monkeypatch, name, expected):
    from biotok.card import hub_id

    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "bert-tiny").mkdir(parents=True)
    assert hub_id(name) == expected


def test_recorded_command_stays_on_one_line_and_runs_in_bash(tmp_path):
    """A name holding a newline, quotes and a code fence is quoted as bash's $'...': the card's command
    is one line, and bash gives back the very same word."""
    import shutil
    import subprocess

    from biotok.card import sh_quote

    word = "moved\n```\n# title\t'quoted' \\ <img>"
    quoted = sh_quote(word)
    assert "\n" not in quoted and sh_quote("runs/x") == "runs/x"
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    got = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, check=True).stdout
    assert got.decode("utf-8") == word


HOSTILE = "x\n```\n# second title\n<img src=x onerror=alert(1)>|*a*"


def _hostile(obj):
    """``obj`` with every string value (not the keys that select behaviour) replaced by markup."""
    if isinstance(obj, dict):
        return {k: _hostile(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_hostile(v) for v in obj]
    return HOSTILE if isinstance(obj, str) else obj


def _assert_whole(card_text: str, fences: list[str]) -> None:
    from markdown_it import MarkdownIt

    body = card_text.split("---\n", 2)[2]
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(body)
    assert [t.tag for t in tokens if t.type == "heading_open"].count("h1") == 1
    assert not [t for t in tokens if t.type in ("html_block", "html_inline")]
    assert [t.info for t in tokens if t.type == "fence"] == fences
    assert "<img" not in md.render(body)
    parse_front_matter(card_text)  # the front matter still parses


def test_every_card_field_from_a_received_json_stays_literal(tmp_path):
    """Issue 40 item 7 (the shared writer escapes every field, for every command): biotok.json,
    results.json and transfer.json may come from elsewhere; markup in any of their strings stays text."""
    from biotok.card import tokenizer_card
    from biotok_train.cards import finetune_card, transfer_card, vocabulary_section

    meta = _hostile({"config": {"algo": "unigram", "backend": "sentencepiece", "seed": "s",
                                "normalize": {"lowercase": "yes"}},
                     "corpus": {"lines": 3, "files": [{"path": "a.txt", "bytes": 1, "sha256": "ab"}]},
                     "versions": {"biotok": "1"}})
    _assert_whole(tokenizer_card(str(tmp_path / "tok"), meta, "biotok train c.txt").render(), ["bash", "python"])
    result = _hostile({"task": "ner", "dataset": "d", "model": "m", "dev_metric": "f1", "best_epoch": "e",
                       "metrics": {"f1": 0.5, HOSTILE: 0.1}, "labels": ["B-X"],
                       "task_info": {"description": "d", "scheme": "s", "metric": "f1"},
                       "config": {"epochs": "e", "seed": "s", "optim": {"lr": "l"}}})
    result["task"] = "ner"
    _assert_whole(finetune_card(result, has_model=True, name=str(tmp_path / "ner"), command="c").render(),
                  ["bash", "python"])
    prov = _hostile({"model": {"path": "p", "architecture": "a", "generator": "g", "weights_sha256": {"f": "v"}},
                     "new_tokenizer": {"name": "n", "fingerprint": "f"}, "old_tokenizer": {"name": "o"},
                     "method": "fvt", "seed": "s", "counts": {"copied": 1}, "vocab_size": {"old": "o"},
                     "versions": {"torch": "t"}})
    _assert_whole(transfer_card(prov, HOSTILE, "c").render(), ["bash", "python"])
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(vocabulary_section(meta, HOSTILE))
    assert not [t for t in tokens if t.type in ("html_block", "html_inline", "heading_open", "fence")]
