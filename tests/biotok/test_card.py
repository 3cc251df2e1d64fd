"""biotok.card: every tokenizer artifact carries a model card whose front matter parses."""

from __future__ import annotations

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
