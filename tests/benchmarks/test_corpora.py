"""benchmarks/corpora.py: the readers the French recipes build their texts from (probe_fr,
study, ablation_gpu_fr), the split, sample and line writer they share, and the pretraining text
without the evaluated sentences."""

from __future__ import annotations

import json
from itertools import islice

from benchmarks import corpora as C
from biotok_train.pretrain.exclude import split_sentences


def test_write_lines_and_held_out_split(tmp_path):
    out = C.write_lines(tmp_path / "a.txt", ["x", "y"], head="h\n")
    assert out.read_text(encoding="utf-8") == "h\nx\ny\n" and not (tmp_path / "a.tmp").exists()
    train, held = C.held_out_split((f"d{i}" for i in range(7)), tmp_path / "s", 3)
    assert held.read_text(encoding="utf-8") == "d2\nd5\n"
    assert train.read_text(encoding="utf-8") == "d0\nd1\nd3\nd4\nd6\n"
    assert C.held_out_split(["other"], tmp_path / "s", 3) == (train, held)  # written once
    assert held.read_text(encoding="utf-8") == "d2\nd5\n"
    assert C.paragraphs(" a \n\n  \nb c\n") == ["a", "b c"]


def test_the_french_readers(shared_data):
    assert next(C.cim10_labels(as_written=True)) == "Choléra"
    assert any("  " in label for label in C.cim10_labels(as_written=True))  # as the file has them
    assert not any("  " in label for label in C.cim10_labels())
    mcqa = list(islice(C.frenchmedmcqa_texts(), 7))  # a question, its five answers, the next question
    assert mcqa[0].endswith("les particules alpha") and mcqa[1] == "Sont formées de noyaux d'hélium"
    assert mcqa[6].startswith("Parmi les bactéries suivantes")
    leaflets = list(C.leaflet_paragraphs(0.01))
    size = sum(len(p.encode("utf-8")) + 1 for p in leaflets)
    assert size >= 10_000 and all(p and "\n" not in p and p == p.strip() for p in leaflets)
    assert leaflets[0].startswith("A 313 200 000 UI POUR CENT, pommade")
    pamj = C.pamj_texts()
    assert len(pamj) == 1520 and pamj[0].startswith("Cas n° 1 Un cycliste")
    assert sum("\n" in case for case in pamj) == 572  # their own line breaks kept (pamj_documents joins them)
    test = C.quaero_paragraphs("test")
    assert len(test) == 1413 and test[:2] == ["EMEA / H / C / 612", "Qu ’ est-ce qu IONSYS"]
    assert C.labforsims_turns()[:2] == ["Bonjour Madame. Pourquoi vous venez ici\xa0?", "Bonjour Bah, j’ai mal au ventre."]


def test_french_biomedical_lines_are_wmt_cim10_mcqa_then_leaflets(shared_data):
    lines = C.french_biomedical_lines(0.001)
    assert next(lines) == next(C.wmt_biomed_french())
    rest = list(lines)
    assert rest[-len(list(C.leaflet_paragraphs(0.001))):] == list(C.leaflet_paragraphs(0.001))
    assert "Choléra" in rest


def test_line_sample_takes_every_kth_line_once(tmp_path):
    src = C.write_lines(tmp_path / "src.txt", [f"{i:04d}" for i in range(10)])  # 40 characters
    out = C.line_sample(src, tmp_path / "sample.txt", 12)  # k = 40 // 12 = 3
    assert out.read_text(encoding="utf-8") == "0000\n0003\n0006\n0009\n"
    C.write_lines(src, ["other"])
    assert C.line_sample(src, out, 12).read_text(encoding="utf-8") == "0000\n0003\n0006\n0009\n"  # written once
    assert C.line_sample(src, tmp_path / "all.txt", 10**6).read_text(encoding="utf-8") == "other\n"  # k at least 1


def test_pretraining_text_leaves_out_the_evaluated_sentences(shared_data, tmp_path):
    from biotok_train.pretrain.exclude import eval_sentences

    sentence = min(s for s in eval_sentences(("e3c",), str(C.CORPORA)) if len(s.split()) >= 8)
    clean = [f"Ligne {i} sans rapport avec les phrases évaluées des tâches." for i in range(5)]
    sources = {"cases": iter([f"Début. {sentence} Fin.", *clean[:3]]), "labels": iter([sentence.upper(), *clean[3:]])}
    record = C.pretraining_text(tmp_path / "t", sources, ("e3c",), min_words=6, heldout_every=2)
    assert record["tasks"] == ["e3c"] and record["min_words"] == 6 and record["evaluated_sentences"] > 100
    assert record["sources"]["cases"] == {"lines_in": 4, "chars_in": sum(len(x) for x in [f"Début. {sentence} Fin.",
                                          *clean[:3]]), "kept": 3, "excluded": 1, "matched": 1,
                                          "chars": sum(map(len, clean[:3]))}
    assert record["sources"]["labels"]["excluded"] == 1  # compared normalised: the upper-cased sentence too
    text = (tmp_path / "t" / "text.txt").read_text(encoding="utf-8").splitlines()
    assert text == clean and record["text"] == {"lines": 5, "chars": sum(map(len, clean))}
    assert (tmp_path / "t" / "heldout.txt").read_text(encoding="utf-8").splitlines() == clean[1::2]  # 2nd, 4th
    assert (tmp_path / "t" / "pretrain.txt").read_text(encoding="utf-8").splitlines() == clean[0::2]
    assert json.loads((tmp_path / "t" / "text.json").read_text(encoding="utf-8")) == record


def test_french_pretraining_sources_and_leaflet_sentences(shared_data):
    leaflets = list(C.leaflet_sentences(3))
    assert len(leaflets) == len({" ".join(s.lower().split()) for s in leaflets})  # each once
    assert leaflets[0].startswith("A 313 200 000 UI POUR CENT, pommade")
    assert len(leaflets) < sum(len(split_sentences(t)) for t in islice(C.leaflet_texts(), 3))  # repeats dropped
    sources = {k: list(v) for k, v in C.french_pretraining_sources(2).items()}
    assert [len(v) for k, v in sources.items() if k != "E3C drug leaflets (sentences, de-duplicated)"] == [2, 40, 40]
    assert sources["E3C drug leaflets (sentences, de-duplicated)"] == list(C.leaflet_sentences(2))
