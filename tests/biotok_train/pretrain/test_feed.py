"""The loop's input side (biotok_train.pretrain.feed): static-shape predicted positions that leave
the losses unchanged, and batches built ahead on a thread that are the batches built in place."""

import pytest

torch = pytest.importorskip("torch")

from biotok_train.pretrain.feed import BUCKETS, Feed, select_positions, static_positions  # noqa: E402


def test_static_positions_are_the_selection_padded_to_a_bucket():
    labels = torch.full((4, 32), -100)
    labels[0, 3], labels[1, 5], labels[3, 31] = 7, 8, 9
    pos = static_positions(labels)
    bucket = 4 * 32 // BUCKETS
    assert len(pos) == bucket and pos[:3].tolist() == [3, 32 + 5, 3 * 32 + 31] and pos[3:].eq(0).all()
    labels[2, 1:20] = 5  # 22 selected: the next bucket
    assert len(static_positions(labels)) == 3 * bucket
    labels[0, 0] = 1
    with pytest.raises(ValueError, match="position 0"):
        static_positions(labels)


def test_the_padded_selection_gives_the_boolean_selections_loss():
    torch.manual_seed(0)
    hidden, labels = torch.randn(3, 16, 8), torch.full((3, 16), -100)
    labels[0, 2], labels[1, 7], labels[2, 9], labels[2, 10] = 1, 4, 2, 3  # 4 selected, buckets of 3
    head = torch.nn.Linear(8, 6)
    h1, y1 = select_positions(hidden, labels)
    h2, y2 = select_positions(hidden, labels, static_positions(labels))
    assert len(y2) > len(y1) and (y2[len(y1):] == -100).all()
    l1 = torch.nn.functional.cross_entropy(head(h1), y1)
    l2 = torch.nn.functional.cross_entropy(head(h2), y2)
    assert torch.allclose(l1, l2)


def test_batches_built_ahead_are_the_batches_built_in_place():
    built = []

    def make(key):
        built.append(key)
        g = torch.Generator().manual_seed(hash(key) % 1000)
        return {"x": torch.rand(2, 3, generator=g)}, key[0]

    ahead, inline = Feed(make, torch.device("cpu"), ahead=True), Feed(make, torch.device("cpu"), ahead=False)
    keys = [(s, m) for s in range(3) for m in range(2)]
    try:
        for k, nxt in zip(keys, keys[1:] + [None]):
            a, b = ahead.get(k, nxt), inline.get(k, nxt)
            assert torch.equal(a[0]["x"], b[0]["x"]) and a[1] == b[1]
    finally:
        ahead.close()
    assert built.count((1, 0)) == 2  # once ahead (on the thread), once in place: never twice on one side
