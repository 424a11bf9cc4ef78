"""A tuned collector leaves what existed at start alone and collects young objects
in bigger, rarer batches; cycles made later are still collected."""

from __future__ import annotations

import json

from .child import run_program

# In a fresh process (the test runner's own collector stays as it is): how many
# young collections 200,000 short-lived cycles cause, how many objects were
# frozen, and whether a cycle made afterwards is still reclaimed.
PROGRAM = """
import gc, json, sys, weakref
from services.common.collector import tune_collector

class Node:
    pass

if sys.argv[1] == "tuned":
    tune_collector()
frozen = gc.get_freeze_count()
before = gc.get_stats()[0]["collections"]
for _ in range(200_000):
    a, b = Node(), Node()
    a.other, b.other = b, a
young = gc.get_stats()[0]["collections"] - before
a, b = Node(), Node()
a.other, b.other = b, a
probe = weakref.ref(a)
del a, b
gc.collect()
print(json.dumps({"young": young, "frozen": frozen, "reclaimed": probe() is None}))
"""


def run(mode: str) -> dict[str, object]:
    result: dict[str, object] = json.loads(run_program(PROGRAM, mode))
    return result


def test_the_tuned_collector_runs_young_collections_an_order_of_magnitude_less_often() -> None:
    default, tuned = run("default"), run("tuned")
    assert isinstance(default["young"], int) and isinstance(tuned["young"], int)
    # 400,000 container objects: about 570 young collections at 700, 40 at 10,000.
    assert default["young"] > 400
    assert tuned["young"] < default["young"] / 10


def test_what_existed_when_tuned_is_frozen_and_later_cycles_are_still_reclaimed() -> None:
    default, tuned = run("default"), run("tuned")
    assert default["frozen"] == 0
    assert isinstance(tuned["frozen"], int) and tuned["frozen"] > 1_000
    assert default["reclaimed"] is True and tuned["reclaimed"] is True
