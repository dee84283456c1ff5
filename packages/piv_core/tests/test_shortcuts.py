"""The shortcut search finds a surface rule when one pays, and none when none does."""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest
from piv_core.baseline.shortcuts import CONSTANT, Glance, Move, held_out_mean, point_moved, search


class _Toy:
    """Rows whose fault a feature `tell` gives away (or not), and a noise feature; the reward is the
    share of rows flagged exactly when faulty and stated with the right figure."""

    def __init__(self, telling: bool) -> None:
        self.telling = telling

    def tasks(self, seed: int, count: int) -> list[list[tuple[bool, int, bool]]]:
        rng = random.Random(seed)
        out = []
        for _ in range(count):
            rows = []
            for _ in range(5):
                faulty = rng.random() < 0.5
                tell = faulty if self.telling else rng.random() < 0.5
                rows.append((faulty, rng.randrange(3), tell))
            out.append(rows)
        return out

    def glances(self, task):
        return [
            Glance(f"T{i}", {"tell": tell, "noise": noise}, Decimal("1.00"), ("fault",))
            for i, (_, noise, tell) in enumerate(task)
        ]

    def reply(self, task, figures, flags):
        return json.dumps({"flags": sorted(flags), "zero": sorted(t for t, v in figures.items() if v == 0)})

    def reward(self, task, reply):
        stated = json.loads(reply)
        right = sum(
            (f"T{i}" in stated["flags"]) == faulty and (f"T{i}" in stated["zero"]) == faulty
            for i, (faulty, _, _) in enumerate(task)
        )
        return right / len(task)


def test_a_telling_feature_is_found_and_pays_in_full():
    toy = _Toy(telling=True)
    found = search(toy, toy.tasks(1, 30), toy.tasks(2, 60))
    assert found.mean == pytest.approx(1.0) and "tell" in found.features
    at = found.features.index("tell")
    for cell, move in found.table.items():
        assert (move.flag != "none" and move.figure == "zero") == cell[at], (cell, move)


def test_without_a_telling_feature_the_best_rule_earns_what_guessing_does():
    toy = _Toy(telling=False)
    test = toy.tasks(4, 200)
    found = search(toy, toy.tasks(3, 30), test)
    assert found.mean < 0.6
    assert held_out_mean(toy, test, (), {(): Move()}) == pytest.approx(found.mean, abs=0.1)


class _FewFigures:
    """Rows whose right figure is one of two, by their size (12.00 small, 30.00 large); the books
    record it on a clean row and any other whole figure up to 99 on a faulty one. The reward is the
    share of rows stated with the right figure: the books copied earn about half."""

    RIGHT = {False: Decimal("12.00"), True: Decimal("30.00")}

    def tasks(self, seed: int, count: int) -> list[list[tuple[bool, Decimal]]]:
        rng = random.Random(seed)
        out = []
        for _ in range(count):
            rows = []
            for _ in range(5):
                big = rng.random() < 0.5
                wrong = Decimal(rng.choice([n for n in range(1, 100) if n not in (12, 30)])).quantize(
                    Decimal("0.01")
                )
                rows.append((big, self.RIGHT[big] if rng.random() < 0.5 else wrong))
            out.append(rows)
        return out

    def glances(self, task):
        return [Glance(f"T{i}", {"big": big}, recorded, ("fault",)) for i, (big, recorded) in enumerate(task)]

    def reply(self, task, figures, flags):
        return json.dumps({row: str(figure) for row, figure in figures.items()})

    def reward(self, task, reply):
        stated = json.loads(reply)
        return sum(Decimal(stated[f"T{i}"]) == self.RIGHT[big] for i, (big, _) in enumerate(task)) / len(task)


def test_a_figure_the_books_often_state_is_tried_as_every_rows_answer():
    """A reward whose right figures are few pays a guess of the usual one by a row's size, with no
    arithmetic: the search fits such constants from the books and finds that guess."""
    toy = _FewFigures()
    test = toy.tasks(6, 100)
    assert held_out_mean(toy, test, (), {(): Move()}) < 0.6
    found = search(toy, toy.tasks(5, 30), test)
    assert found.mean == pytest.approx(1.0) and found.features == ("big",)
    assert {(cell, move.figure, move.value) for cell, move in found.table.items()} == {
        ((big,), CONSTANT, toy.RIGHT[big]) for big in (False, True)
    }


def test_a_point_moved_is_read_off_the_page():
    assert point_moved(Decimal("44.00"), Decimal("4.40")) and point_moved(Decimal("257.34"), Decimal("25.73"))
    assert point_moved(Decimal("257.34"), Decimal("2.57"))
    assert not point_moved(Decimal("44.00"), Decimal("4.00")) and not point_moved(
        Decimal("44.00"), Decimal("44.00")
    )
