"""The shared corpora the experiments read, named once: where each lives in ../shared/data
(``$BIOTOK_SHARED_DATA``; see its MANIFEST.md), and readers of the French text they hold.

Every script takes its paths from here: the shared data's corpora and tokenizers, and the
checkout's own small sample and term list.
"""

from __future__ import annotations

import csv
import io
import json
import tarfile
from pathlib import Path
from itertools import islice
from typing import Callable, Iterable, Iterator

from biotok.datadir import shared_data
from biotok.datasets.named import QUAERO_TAR
from biotok.io import open_text, sha256_file

REPO = Path(__file__).resolve().parent.parent
DATA = shared_data() or REPO.parent / "shared" / "data"  # the checkout's ../shared/data by default
CORPORA = DATA / "corpora"
TOKENIZERS = DATA / "tokenizers"

E3C = CORPORA / "e3c-fr"
PAMJ = E3C / "layer3_fr_pamj_ccby.jsonl.xz"  # E3C layer 3, Pan African Medical Journal clinical cases (CC BY 4.0)
LEAFLETS = E3C / "layer3_fr_ministere_ccbync.jsonl.xz"  # E3C layer 3, French drug leaflets (CC BY-NC)
WMT_BIOMED_TRAIN = CORPORA / "wmt-biomed-fr-en" / "wmt_biomed_train_medline_scielo_edp_fr-en.tar.xz"
WMT_BIOMED_FR = ("./medline_d1.fr", "./scielo_d1.fr", "./edp_d1.fr")  # its French sides, one sentence a line
CIM10 = CORPORA / "edsnlp-fr-terminology" / "cim10.csv.gz"  # CIM-10 (French ICD-10) codes and labels
FRENCHMEDMCQA = CORPORA / "frenchmedmcqa"  # {train,dev,test}.json.gz: questions and answers
QUAERO = CORPORA / QUAERO_TAR  # QUAERO French medical corpus (EMEA and MEDLINE texts)
LABFORSIMS = CORPORA / "labforsims2-fr-dialogues" / "labforsims2-corpus.tar.xz"  # simulated clinical dialogues
GPU_SUITE_H200 = DATA.parent / "gpu" / "h200-2026-11-27"  # the GPU suite's first run, on one H200 (its README)
CAMEMBERTA = TOKENIZERS / "camemberta-base"
CAMEMBERTV2 = TOKENIZERS / "camembertv2-base"
BERT_BASE_CASED = TOKENIZERS / "bert-base-cased"

SAMPLE = REPO / "corpora" / "sample" / "e3c_pamj_fr.txt"  # in the checkout: a small PAMJ sample (no shared data needed)
TERMS_FR = REPO / "corpora" / "terms" / "fr_biomedical.txt"  # in the checkout: French biomedical terms

FRENCH_TASKS = ("e3c", "quaero-emea-drb", "quaero-medline-drb", "morfitt", "frenchmedmcqa")
"""The French tasks the experiments evaluate (registered in biotok_train.tasks)."""


def require_data() -> None:
    """Stop with one line when the shared data is not there."""
    if not (DATA / "MANIFEST.md").is_file():
        raise SystemExit(f"this needs the reference data: {DATA} not found (set BIOTOK_SHARED_DATA)")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _jsonl_texts(path: Path) -> Iterator[str]:
    """The ``text`` field of each record of an E3C JSON-lines file."""
    with open_text(path, newline=None) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)["text"]


def pamj_documents() -> Iterator[str]:
    """The PAMJ clinical cases, one document a line (its lines joined by a space)."""
    yield from filter(None, map(_one_line, _jsonl_texts(PAMJ)))


def leaflet_texts() -> Iterator[str]:
    """The drug leaflets, one leaflet a line (many repeat the same sentences)."""
    yield from filter(None, map(_one_line, _jsonl_texts(LEAFLETS)))


def wmt_biomed_french() -> Iterator[str]:
    """The French side of the WMT-biomed training abstracts (MEDLINE, SciELO, EDP), a sentence a line."""
    with tarfile.open(WMT_BIOMED_TRAIN) as t:
        for name in WMT_BIOMED_FR:
            member = t.extractfile(name)
            assert member is not None, name
            for line in member.read().decode("utf-8").splitlines():
                if line := _one_line(line):
                    yield line


def wmt_french_file(out: Path) -> Path:
    """The French side of the WMT-biomed training abstracts written once to ``out``, one stripped
    line each (the general text of the transfer and Table 9 CPU runs); reused when it exists."""
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with tarfile.open(WMT_BIOMED_TRAIN, "r:xz") as tar, open(tmp, "w", encoding="utf-8") as f:
        for name in WMT_BIOMED_FR:
            for line in io.TextIOWrapper(tar.extractfile(name), encoding="utf-8"):
                if line.strip():
                    f.write(line.strip() + "\n")
    tmp.rename(out)
    return out


def cim10_labels(as_written: bool = False) -> Iterator[str]:
    """The CIM-10 labels (their long French form), one a line; ``as_written``: each label as the
    file has it (some hold double spaces), blank ones too."""
    with open_text(CIM10, newline=None) as f:
        for row in csv.DictReader(f):
            if as_written:
                yield row["long"]
            elif label := _one_line(row["long"]):
                yield label


def paragraphs(text: str) -> list[str]:
    """The non-blank lines of ``text``, stripped."""
    return [p.strip() for p in text.splitlines() if p.strip()]


def pamj_texts() -> list[str]:
    """The PAMJ clinical cases as they are (their own line breaks kept), one string each."""
    return list(_jsonl_texts(PAMJ))


def tar_paragraphs(archive: Path, keep: Callable[[str], bool]) -> list[str]:
    """:func:`paragraphs` of the files of a tar archive whose name passes ``keep``, in name order."""
    out = []
    with tarfile.open(archive) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.isfile() and keep(m.name):
                out.extend(paragraphs(tar.extractfile(m).read().decode("utf-8")))
    return out


def quaero_paragraphs(split: str) -> list[str]:
    """The paragraphs of QUAERO's ``split`` (train, dev, test): MEDLINE titles and EMEA texts."""
    return tar_paragraphs(QUAERO, lambda n: n.startswith(f"corpus/{split}/") and n.endswith(".txt"))


def labforsims_turns() -> list[str]:
    """The LabForSIMS dialogue turns, without their speaker id ("d39000000 bonjour" -> "bonjour")."""
    lines = tar_paragraphs(LABFORSIMS, lambda n: n.startswith("dialogues/"))
    return [parts[1] for line in lines if len(parts := line.split(maxsplit=1)) == 2]


def dialogues_and_abstracts() -> list[str]:
    """A user's kind of French corpus (issue 45): the LabForSIMS dialogue turns, then the WMT-biomed
    French abstracts, a line each (4.7 MB)."""
    return labforsims_turns() + list(wmt_biomed_french())


def write_conll(path: Path, sentences: Iterable) -> Path:
    """Sentences (``.words``, ``.tags``) as a CoNLL file: ``token<TAB>tag`` lines, a blank line after each."""
    return write_lines(path, ("".join(f"{w}\t{t}\n" for w, t in zip(s.words, s.tags)) for s in sentences))


def quaero_conll(folder: Path, sentences: int | None = None) -> Path:
    """QUAERO (MEDLINE and EMEA, biotok's conversion: the outermost entity) as a user's CoNLL files,
    ``folder``/{train,dev,test}.conll; ``sentences``: the first that many of each split only."""
    from biotok.datasets.named import named_splits

    folder.mkdir(parents=True, exist_ok=True)
    for split, sents in zip(("train", "dev", "test"), named_splits("quaero", CORPORA)):
        write_conll(folder / f"{split}.conll", sents[:sentences])
    return folder


def frenchmedmcqa_texts() -> Iterator[str]:
    """FrenchMedMCQA's questions, each followed by its answers (train, dev, test), one a line."""
    for split in ("train", "dev", "test"):
        with open_text(FRENCHMEDMCQA / f"{split}.json.gz", newline=None) as f:
            for q in json.load(f):
                yield _one_line(q["question"])
                yield from (_one_line(a) for a in q["answers"].values())


def leaflet_paragraphs(megabytes: float) -> Iterator[str]:
    """The drug leaflets' paragraphs, one a line, up to the end of the leaflet that reaches
    ``megabytes`` MB (UTF-8, newlines counted)."""
    budget = int(megabytes * 1_000_000)
    for text in _jsonl_texts(LEAFLETS):
        for para in text.splitlines():
            if (para := _one_line(para)) and budget > 0:
                yield para
                budget -= len(para.encode("utf-8")) + 1
        if budget <= 0:
            return


def french_biomedical_lines(leaflet_mb: float) -> Iterator[str]:
    """French biomedical text beyond the clinical cases, one line each: the WMT-biomed French
    abstracts, the CIM-10 labels, FrenchMedMCQA, then the first ``leaflet_mb`` MB of leaflet paragraphs."""
    yield from wmt_biomed_french()
    yield from cim10_labels(as_written=True)  # as the published probe-fr tokenizers saw them
    yield from frenchmedmcqa_texts()
    yield from leaflet_paragraphs(leaflet_mb)


def first_megabytes(lines: Iterable[str], megabytes: float) -> Iterator[str]:
    """``lines`` up to the one that reaches ``megabytes`` MB (UTF-8, a newline after each), that one included."""
    budget = int(megabytes * 1e6)
    for line in lines:
        yield line
        budget -= len(line.encode("utf-8")) + 1
        if budget <= 0:
            return


def write_lines(path: Path, lines: Iterable[str], head: str = "") -> Path:
    """``head`` then ``lines``, one a line, written to ``path`` through a temporary file."""
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(head)
        f.writelines(line + "\n" for line in lines)
    return tmp.rename(path)


def held_out_split(docs: Iterable[str], folder: Path, every: int) -> tuple[Path, Path]:
    """``folder``/train.txt and heldout.txt: ``docs`` one a line, each ``every``-th held out.
    Written once: reused when both exist."""
    train, held = folder / "train.txt", folder / "heldout.txt"
    if not (train.is_file() and held.is_file()):
        folder.mkdir(parents=True, exist_ok=True)
        docs = list(docs)
        write_lines(held, (d for i, d in enumerate(docs) if i % every == every - 1))
        write_lines(train, (d for i, d in enumerate(docs) if i % every != every - 1))
    return train, held


def leaflet_sentences(limit: int | None = None) -> Iterator[str]:
    """The drug leaflets' sentences, each the first time it occurs (compared normalised);
    ``limit``: from the first ``limit`` leaflets only."""
    from biotok_train.pretrain.exclude import normalize_sentence, split_sentences  # lazy: the companion only here

    seen: set[str] = set()
    for doc in islice(leaflet_texts(), limit):
        for s in split_sentences(doc):
            key = normalize_sentence(s)
            if key and key not in seen:
                seen.add(key)
                yield s


def french_pretraining_sources(n: int | None = None) -> dict[str, Iterator[str]]:
    """All the French biomedical text of the shared data, by source (issue 32's pretraining text);
    ``n``: the first ``n`` clinical cases and leaflets, ``20 n`` abstract sentences and labels."""
    lines = 20 * n if n else None
    return {"E3C PAMJ clinical cases": islice(pamj_documents(), n),
            "E3C drug leaflets (sentences, de-duplicated)": leaflet_sentences(n),
            "WMT-biomed French abstracts": islice(wmt_biomed_french(), lines),
            "CIM-10 labels": islice(cim10_labels(), lines)}


def pretraining_text(folder: Path, sources: dict[str, Iterable[str]], tasks: tuple[str, ...], *, min_words: int,
                     heldout_every: int) -> dict:
    """``folder``/{text,pretrain,heldout}.txt and text.json (what each source gave and lost): the
    ``sources``' lines minus every line that is or contains a dev or test sentence of ``tasks``
    (a sentence of fewer than ``min_words`` words: only a line that is exactly it), and each
    ``heldout_every``-th kept line (from 1) held out, as ``ablate`` splits its corpus."""
    from biotok_train.pretrain.exclude import eval_sentences, exclude_sentences  # lazy: the companion only here

    folder.mkdir(parents=True, exist_ok=True)
    evaluated = eval_sentences(tasks, str(CORPORA))
    kept, record = [], {"tasks": list(tasks), "evaluated_sentences": len(evaluated), "min_words": min_words,
                        "sources": {}}
    for name, lines in sources.items():
        lines = list(lines)
        ex = exclude_sentences(lines, evaluated, min_words=min_words)
        kept += ex.kept
        record["sources"][name] = {"lines_in": len(lines), "chars_in": sum(map(len, lines)), **ex.to_dict(),
                                   "chars": sum(map(len, ex.kept))}
    held = [line for i, line in enumerate(kept, 1) if i % heldout_every == 0]
    train = [line for i, line in enumerate(kept, 1) if i % heldout_every != 0]
    for name, lines in (("text", kept), ("pretrain", train), ("heldout", held)):
        write_lines(folder / f"{name}.txt", lines)
        record[name] = {"lines": len(lines), "chars": sum(map(len, lines))}
    (folder / "text.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


NER_TRAIN_EN = ("ncbi-disease/train.tsv.gz", "bionlp-ner-en/BC5CDR-IOB_train.tsv.gz",
                "bionlp-ner-en/BC2GM-IOB_train.tsv.gz", "blurb-en/JNLPBA/train.tsv.gz")  # under corpora/
WMT_EN = ("wmt-biomed-fr-en/wmt_biomed_train_medline_scielo_edp_fr-en.tar.xz",  # and its English members
          ("medline_d1.en", "scielo_d1.en", "edp_d1.en"))


def english_pretraining_text(out: Path, corpora: Path, tasks: list[str], max_lines: int) -> dict:
    """``out``: the training splits of NCBI-disease, BC5CDR, BC2GM and JNLPBA (a sentence a line) and the English
    WMT biomedical abstracts, minus every line that is or contains a dev or test sentence of ``tasks`` (the first
    ``max_lines`` kept, 0: all); what it holds, with the sources' sha256 (table9_minilm's pretraining text)."""
    from biotok_train.pretrain.exclude import eval_sentences, exclude_sentences  # lazy: the companion only here

    evaluated = eval_sentences(tasks, str(corpora))  # an unknown task name fails here, before any work
    lines, sources = [], []
    for rel in NER_TRAIN_EN:
        with open_text(corpora / rel, newline=None) as f:
            words = [line.split("\t")[0].strip() for line in f]
        part = " ".join(w if w and not w.startswith("-DOCSTART-") else "\n" for w in words).split("\n")
        lines += [p.strip() for p in part if p.strip()]
        sources.append({"file": rel, "sha256": sha256_file(corpora / rel)})
    with tarfile.open(corpora / WMT_EN[0]) as tar:
        for name in WMT_EN[1]:
            lines += [l.strip() for l in tar.extractfile(f"./{name}").read().decode("utf-8").splitlines() if l.strip()]
    sources.append({"file": WMT_EN[0], "members": list(WMT_EN[1]), "sha256": sha256_file(corpora / WMT_EN[0])})
    ex = exclude_sentences(lines, evaluated)
    kept = list(ex.kept[:max_lines] if max_lines else ex.kept)
    out.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return {"sources": sources, "lines_in": len(lines), "evaluated_sentences": len(evaluated), **ex.to_dict(),
            "lines": len(kept), "sha256": sha256_file(out)}


def pretraining_text_sentence(c: dict) -> str:
    """What :func:`english_pretraining_text`'s record ``c`` says, in words (the sources, what was excluded, why)."""
    files = ", ".join(f"`{s['file']}` (sha256 {s['sha256'][:16]})" for s in c["sources"])
    return (f"Pretraining text: the training splits {files}; {c['lines_in']:,} lines in, **{c['excluded']:,} lines "
            f"excluded** because they are or contain one of the {c['evaluated_sentences']:,} dev/test sentences of the "
            f"evaluated tasks ({c['matched']:,} distinct sentences found; `biotok_train.pretrain.exclude`); "
            f"{c['lines']:,} lines kept (sha256 {c['sha256'][:16]}), of which ablate holds out each 20th line "
            "(fertility, masked words, held-out [MASK] loss).")


def line_sample(src: Path, dest: Path, chars: int) -> Path:
    """Every k-th line of ``src``, k chosen for about ``chars`` characters, written once to ``dest``."""
    if not dest.is_file():
        lines = src.read_text(encoding="utf-8").splitlines()
        write_lines(dest, lines[::max(1, sum(map(len, lines)) // chars)])
    return dest


__all__ = [
    "BERT_BASE_CASED", "CAMEMBERTA", "CAMEMBERTV2", "CIM10", "CORPORA", "DATA", "E3C", "FRENCHMEDMCQA",
    "FRENCH_TASKS", "GPU_SUITE_H200", "LABFORSIMS", "LEAFLETS", "NER_TRAIN_EN", "PAMJ", "QUAERO", "REPO", "SAMPLE",
    "TERMS_FR", "TOKENIZERS", "WMT_BIOMED_FR", "WMT_BIOMED_TRAIN", "WMT_EN", "cim10_labels",
    "dialogues_and_abstracts", "english_pretraining_text", "first_megabytes", "french_biomedical_lines",
    "french_pretraining_sources", "frenchmedmcqa_texts", "held_out_split", "labforsims_turns", "leaflet_paragraphs",
    "leaflet_sentences", "leaflet_texts", "line_sample", "pamj_documents", "pamj_texts", "paragraphs",
    "pretraining_text", "pretraining_text_sentence", "quaero_conll", "quaero_paragraphs", "require_data",
    "tar_paragraphs", "wmt_biomed_french", "wmt_french_file", "write_conll", "write_lines",
]
