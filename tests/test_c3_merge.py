"""C3's merge has two ways in the project model: a plain one for the few short sequences of
most classes with several bases, and one that keeps counts and a heap for long ones (a class
with hundreds of bases, a deep line). Both must give Python's order, or refuse the same
inputs."""

from __future__ import annotations

import random
from typing import Any

import pytest

from hookguard.model import project
from hookguard.model.project import _c3_merge, _c3_merge_small


def _heap_merge(sequences: list[list[Any]], monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(project, "_SMALL_MERGE", -1)  # every input the long way
    return _c3_merge([list(s) for s in sequences])


def _python_mro(bases: dict[str, list[str]], name: str) -> list[str] | None:
    """The MRO Python gives the class ``name`` of the hierarchy ``bases``, or None where
    Python refuses it."""
    made: dict[str, type] = {}

    def make(n: str) -> type:
        if n not in made:
            made[n] = type(n, tuple(make(b) for b in bases[n]) or (object,), {})
        return made[n]

    try:
        return [c.__name__ for c in make(name).__mro__[:-1]]
    except TypeError:
        return None


def _hierarchy(rng: random.Random, size: int) -> dict[str, list[str]]:
    bases: dict[str, list[str]] = {}
    for i in range(size):
        earlier = list(bases)
        count = rng.randint(0, min(4, len(earlier)))
        bases[f"C{i}"] = rng.sample(earlier, count)
    return bases


@pytest.mark.parametrize("size", [4, 8, 16, 40])
def test_both_merges_give_pythons_mro_or_refuse_as_python_does(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(size)
    refused = merged = 0
    for _ in range(150):
        bases = _hierarchy(rng, size)
        mros: dict[str, list[str]] = {}
        for name, own in bases.items():
            expected = _python_mro(bases, name)
            if any(b not in mros for b in own):
                continue  # a base Python refused: nothing to merge
            sequences = [mros[b] for b in own] + [list(own)]
            small = _c3_merge_small([list(s) for s in sequences if s])
            with monkeypatch.context() as patch:
                heap = _heap_merge(sequences, patch)
            assert small == heap
            if expected is None:
                assert small is None
                refused += 1
                continue
            assert small is not None and [name, *small] == expected
            mros[name] = expected
            merged += 1
    assert merged > 100 and (size < 16 or refused > 0)  # both kinds of input were met


def test_the_plain_merge_is_chosen_only_for_short_inputs() -> None:
    long = [[f"a{i}" for i in range(30)], [f"b{i}" for i in range(30)], ["a0", "b0"]]
    assert sum(map(len, long)) > project._SMALL_MERGE
    merged = _c3_merge(long)
    assert merged is not None and merged == _c3_merge_small(long)
    assert merged[:2] == ["a0", "a1"] and merged[-1] == "b29"
