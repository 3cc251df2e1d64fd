"""ablate.analysis: which verdicts carry a signal (the decision the page only shows), and the
per-cell bootstrap rows (no id()-keyed cache)."""

from biotok_train.ablate.analysis import signal
from biotok_train.ablate.results import ArmResult

SEEDS = {"mean": 0.5, "std": None, "n": 1, "values": [0.5]}


def _arm(name: str, left: bool | None) -> ArmResult:
    held = {} if left is None else {"left_plateau": left}
    return ArmResult(size="tiny", name=name, tokenizer=name, vocab_size=10, fertility=1.0, pieces_per_line=1.0,
                     chars_per_token=1.0, corpus_tokens=1, steps=1, tokens_seen=1, chars_seen=1, epochs=1.0,
                     mlm={"top1": SEEDS}, mlm_words=1, metrics={"ner": SEEDS}, heldout_mlm=held)


def _cmp(task: str, verdict: str = "worse") -> dict:
    return {"size": "tiny", "task": task, "reference_arm": "a", "candidate_arm": "b", "verdict": verdict}


def _floor(task: str, arm: str, beats: bool, key: str = "beats_floor") -> dict:
    return {"size": "tiny", "task": task, "arm": arm, key: beats}


def test_a_plateau_arm_has_no_masked_word_signal():
    """The MLM "worse" of an arm that did not leave the plateau is void; the tasks' verdicts stand."""
    marked = signal([_cmp("mlm"), _cmp("ner")], [_arm("a", True), _arm("b", False)],
                    [_floor("ner", "a", True)], [_floor("mlm", "a", True)], [])
    assert marked[0]["signal"] is False and marked[0]["why_no_signal"] == "b did not leave the plateau"
    assert "signal" not in marked[1]


def test_no_arm_above_its_floor_or_the_baseline_means_no_signal():
    both_off = [_arm("a", True), _arm("b", True)]
    below = [_floor("ner", "a", False), _floor("ner", "b", False)]
    assert signal([_cmp("ner")], both_off, below, [], [])[0]["why_no_signal"] == "no arm beats its random-init floor"
    one = [_floor("ner", "a", True), _floor("ner", "b", False)]  # one arm beats its floor: the verdict stands
    assert "signal" not in signal([_cmp("ner")], both_off, one, [], [])[0]
    quiet = [_floor("ner", "a", False, "beats_baseline"), _floor("ner", "b", False, "beats_baseline")]
    assert signal([_cmp("ner")], both_off, one, [], quiet)[0]["why_no_signal"] == "no arm beats the trivial baseline"
    words = [_floor("mlm", "a", False), _floor("mlm", "b", False)]  # nobody beats always the most frequent word
    assert signal([_cmp("mlm")], both_off, [], words, [])[0]["signal"] is False
    assert "signal" not in signal([_cmp("mlm")], [_arm("a", None), _arm("b", None)], [], [], [])[0]  # unknown: stands
