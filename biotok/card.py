"""Model cards: the README.md that every biotok output folder carries, as on the Hugging Face Hub.

A card is YAML front matter (the Hub's metadata: language, license, tags, base model, datasets,
library, pipeline) and markdown sections: what the folder is, how it was made (the exact command,
the corpus files with their sha256), what it scores, how to load it. Same inputs give the same
bytes: nothing time- or machine-dependent goes in (training time stays in the JSON provenance).
"""

from __future__ import annotations

import json
import re
import os
import shlex
import sys
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

CARD = "README.md"

# The command line of the CLI invocation being run (set by biotok.cli's group), None from Python.
_COMMAND: ContextVar[str | None] = ContextVar("biotok_command", default=None)


def set_command(prog: str, args: Sequence[str] | None) -> None:
    """Record the command line being run (the CLI calls this; the card quotes it), on one line."""
    _COMMAND.set(" ".join([prog, *map(sh_quote, sys.argv[1:] if args is None else args)]).strip())


def sh_quote(arg: Any) -> str:
    """One shell word, as ``shlex.quote``; a word holding a newline or another control character
    is written in bash's ``$'...'`` quoting, so the command stays on one line and still runs."""
    s = str(arg)
    if not _CONTROL.search(s):
        return shlex.quote(s)
    body = "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
                   for c in s.replace("\\", "\\\\").replace("'", "\\'"))
    return f"$'{body}'"


def current_command() -> str | None:
    """The command line that is running, as typed (None when called from Python)."""
    return _COMMAND.get()


@dataclass(frozen=True)
class ModelCard:
    """A model card: Hub metadata (front matter) and markdown sections, rendered by :meth:`render`."""

    title: str
    summary: str
    metadata: Mapping[str, Any] = field(default_factory=dict)  # language, license, tags, base_model, ...
    sections: Sequence[tuple[str, str]] = ()  # (heading, markdown body)

    def render(self) -> str:
        parts = ["---", *_yaml(self.metadata), "---", "", f"# {self.title}", "", self.summary.strip(), ""]
        for heading, body in self.sections:
            if body.strip():
                parts += [f"## {heading}", "", body.strip(), ""]
        return "\n".join(parts)


def _scalar(value: Any) -> str:
    # JSON strings, numbers, booleans and null are valid YAML scalars, quoted where needed
    return json.dumps(value, ensure_ascii=False)


def _yaml(metadata: Mapping[str, Any]) -> list[str]:
    """Front matter lines: scalars and lists of scalars (empty values left out, order kept)."""
    lines: list[str] = []
    for key, value in metadata.items():
        if value is None or value == [] or value == ():
            continue
        if isinstance(value, (list, tuple)):
            lines.append(f"{key}:")
            lines.extend(f"- {_scalar(v)}" for v in value)
        else:
            lines.append(f"{key}: {_scalar(value)}")
    return lines


def write_card(folder: str | os.PathLike[str], card: ModelCard) -> Path:
    """Write ``card`` as ``folder/README.md`` (the folder is a temporary one being filled)."""
    path = Path(folder) / CARD
    path.write_text(card.render(), encoding="utf-8")
    return path


def parse_front_matter(text: str) -> dict:
    """The metadata of a card's front matter (huggingface_hub's parser when installed, else PyYAML)."""
    try:
        # lazy: huggingface_hub's client (requests, 100+ ms) only when a card is parsed
        from huggingface_hub import ModelCard as HubCard

        return HubCard(text, ignore_metadata_errors=False).data.to_dict()
    except ImportError:  # pragma: no cover - huggingface_hub is a core dependency
        import yaml  # lazy: the fallback parser, only without huggingface_hub

        return yaml.safe_load(text.split("---\n")[1]) or {}


# --- user text inside Markdown: a folder name may hold a newline, backticks or HTML ---------------------
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
# what can start Markdown inside a line: code, emphasis, links and images, tables, strikethrough,
# a heading's closing #s, math on the Hub; an underscore only where it can open emphasis
_MD_INLINE = re.compile(r"([\\`*\[\]|~#$])|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def _visible(text: str) -> str:
    """``text`` on one line: control characters (a newline...) written as their escapes."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def md_text(text: Any) -> str:
    """User text (a folder name, a path) as literal Markdown inside a line (a title after ``# ``):
    one line, the punctuation that could open markup there backslash-escaped and ``<``/``>``/``&``
    as entities, so it can open neither a code block nor raw HTML; the rest is left as typed
    (``bert-tiny`` stays ``bert-tiny``)."""
    t = _MD_INLINE.sub(lambda m: "\\" + m.group(), _visible(str(text)))
    return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?$")


def hub_id(name: Any) -> str | None:
    """``name`` as a Hugging Face Hub repository id (a biotok alias gives its repository), or None
    when it is a local path or cannot be one: the Hub's ``base_model`` takes only repository ids."""
    if not name:
        return None
    s = str(name)
    if Path(s).expanduser().exists() or s.endswith(".git") or "--" in s or ".." in s:
        return None
    from biotok.formats.hub import REGISTRY  # lazy: the alias registry, only when a card names a model

    if s.lower() in REGISTRY:
        return REGISTRY[s.lower()].repo_id
    return s if _HUB_ID.match(s) and "/" in s else None


def code_span(text: Any) -> str:
    """User text as an inline code span: one line, fenced by more backticks than it holds in a row."""
    t = _visible(str(text))
    fence = "`" * (max((len(r) for r in re.findall(r"`+", t)), default=0) + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def cell_code(text: Any) -> str:
    """A code span inside a table cell: its ``|`` escaped, which GFM tables would split on."""
    return code_span(text).replace("|", "\\|")


def code_block(text: str, lang: str = "") -> str:
    """A fenced code block whose fence is longer than any run of backticks in ``text`` (a name
    holding a code fence stays inside the block)."""
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def py_str(text: Any) -> str:
    """User text as a Python string literal for a usage snippet (a newline stays an escape)."""
    return json.dumps(str(text), ensure_ascii=False)


def folder_name(path: Any) -> str:
    """The last part of a folder path as given (``runs/bert-tiny/`` -> ``bert-tiny``): a card's title."""
    return Path(str(path)).name or str(path)


def command_section(command: str | None) -> str:
    """How the folder was made: the exact command, or a note that it came from the Python API."""
    if command:
        return code_block(command, "bash")
    return "Made with the Python API (no command line recorded)."


def files_table(files: Sequence[Mapping[str, Any]]) -> str:
    """Markdown table of corpus files: name, bytes, lines, sha256 (the full path is in the JSON)."""
    if not files:
        return ""
    rows = ["| file | bytes | lines | sha256 |", "|---|---:|---:|---|"]
    for f in files:
        rows.append(f"| {cell_code(Path(str(f.get('path') or '-')).name)} | {_count(f.get('bytes'))} | "
                    f"{_count(f.get('lines'))} | {cell_code(f.get('sha256') or '-')} |")
    return "\n".join(rows)


def _count(n: Any) -> str:
    return f"{n:,}" if isinstance(n, int) else "-"


def versions_line(versions: Mapping[str, str]) -> str:
    """``biotok 0.9, tokenizers 0.23.2``: the library versions, as literal Markdown."""
    return md_text(", ".join(f"{k} {v}" for k, v in versions.items()))


def tokenizer_card(name: str, meta: Mapping[str, Any], command: str | None = None) -> ModelCard:
    """The card of a biotok tokenizer artifact, from its biotok.json provenance ``meta``; ``name``:
    the folder as the user gave it (the usage snippet loads it from there, the title is its name)."""
    cfg = meta.get("config") or {}
    norm = cfg.get("normalize") or {}
    corpus = meta.get("corpus") or {}  # None: trained from counts files without their record
    algo, backend = cfg.get("algo", "?"), cfg.get("backend", "?")
    switches = md_text(", ".join(f"{k}={v}" for k, v in norm.items()) or "none")
    made = "\n".join([
        f"- algorithm: **{md_text(algo)}** (trained with {md_text(backend)}), "
        f"{_count(meta.get('vocab_size', cfg.get('vocab_size')))} pieces, seed {md_text(cfg.get('seed'))}",
        f"- normalization (saved inside tokenizer.json): {switches}",
        f"- corpus: {_count(corpus.get('lines'))} lines, {_count(corpus.get('words'))} words, "
        f"{_count(corpus.get('characters'))} characters",
        f"- versions: {versions_line(meta.get('versions', {}))}",
    ])
    usage = code_block("from transformers import AutoTokenizer\n"
                       f"tok = AutoTokenizer.from_pretrained({py_str(name)})\n"
                       "tok.tokenize(\"L’hôpital, 2,5 mg/kg d’acétyltransférase.\")", "python")
    return ModelCard(
        title=f"{md_text(folder_name(name))}: a biotok {md_text(algo)} tokenizer",
        summary=("A biomedical vocabulary trained with biotok. "
                 "It loads without biotok: `transformers.AutoTokenizer.from_pretrained` on this folder "
                 "normalizes exactly as biotok does."),
        metadata={"library_name": "transformers", "tags": ["biotok", "tokenizer", algo, backend, "biomedical"]},
        sections=[("How it was made", made), ("Command", command_section(command)),
                  ("Corpus files", files_table(corpus.get("files", []))), ("Usage", usage)],
    )


__all__ = ["CARD", "ModelCard", "cell_code", "code_block", "code_span", "command_section", "current_command", "files_table",
           "folder_name", "hub_id", "md_text", "parse_front_matter", "py_str", "set_command", "sh_quote",
           "tokenizer_card", "versions_line", "write_card"]
