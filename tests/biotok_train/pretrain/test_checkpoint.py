"""The training state: written whole or not at all, read back as tensors and plain data only."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from biotok.errors import DataError, OutputWriteError  # noqa: E402
from biotok_train.pretrain import checkpoint as ckpt  # noqa: E402
from tests._contract import Mounts  # noqa: E402


@pytest.fixture()
def mounts(tmp_path):
    m = Mounts(tmp_path / "mounts")
    yield m
    m.close()


def _state(n: int = 300_000) -> dict:
    return {"module": {"w": torch.arange(n, dtype=torch.float32)}, "optimizer": {}, "scheduler": {},
            "rng": ckpt.rng_state(), "step": 3, "data_position": 12, "losses": [1.0, 0.5, 0.25]}


def test_state_round_trips_with_every_random_generator(tmp_path):
    import random

    import numpy as np

    ckpt.save_state(tmp_path, _state())
    got = ckpt.load_state(tmp_path)
    assert got["step"] == 3 and torch.equal(got["module"]["w"], _state()["module"]["w"])
    ckpt.set_rng_state(got["rng"])
    a = (torch.rand(3), np.random.rand(3), random.random())
    ckpt.set_rng_state(got["rng"])
    assert torch.equal(a[0], torch.rand(3)) and (a[1] == np.random.rand(3)).all() and a[2] == random.random()


def test_a_checkpoint_with_the_numpy_tuple_of_earlier_versions_still_resumes(tmp_path):
    import numpy as np

    old = _state()
    old["rng"] = {**old["rng"], "numpy": np.random.get_state()}  # what biotok wrote before issue 33
    (tmp_path / ckpt.STATE).parent.mkdir(parents=True)
    torch.save(old, tmp_path / ckpt.STATE)
    ckpt.set_rng_state(ckpt.load_state(tmp_path)["rng"])


def test_a_full_disk_leaves_the_previous_state_and_no_temporary(mounts):
    full = mounts.full(populate=lambda m: ckpt.save_state(m, _state(1000)), size="1m")
    before = (full / ckpt.STATE).read_bytes()
    with pytest.raises(OutputWriteError, match="state.pt: no space left"):
        ckpt.save_state(full, _state())
    assert (full / ckpt.STATE).read_bytes() == before
    assert not (full / "checkpoint" / "state.tmp").exists()
    assert ckpt.load_state(full)["step"] == 3


def test_code_in_a_state_file_is_refused_not_run(tmp_path):
    import os

    class Planted:
        def __reduce__(self):
            return (os.mkdir, (str(tmp_path / "planted"),))

    (tmp_path / "checkpoint").mkdir()
    torch.save({**_state(10), "x": Planted()}, tmp_path / ckpt.STATE)
    with pytest.raises(DataError, match="refused .*state.pt.*mkdir"):
        ckpt.load_state(tmp_path)
    assert not (tmp_path / "planted").exists()
