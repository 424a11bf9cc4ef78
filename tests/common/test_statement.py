"""Statements with named parameters: numbered in order of first use, casts left
alone, and a call that misses a name or adds one is refused before it is sent."""

from __future__ import annotations

import pytest

from services.common.db import Statement


def test_names_are_numbered_in_order_of_first_use_and_casts_are_kept() -> None:
    statement = Statement("SELECT :b::int, :a, :b FROM t WHERE s = :state::bytea AND x = 'a:b'")
    assert statement.sql == "SELECT $1::int, $2, $1 FROM t WHERE s = $3::bytea AND x = 'a:b'"
    assert statement.names == ("b", "a", "state")
    assert str(statement) == statement.sql


def test_the_values_go_in_the_numbered_order() -> None:
    statement = Statement("UPDATE t SET a = :a WHERE id = :id AND b = :b")
    assert statement.args(id=7, b="x", a=1.5) == [1.5, 7, "x"]


@pytest.mark.parametrize(
    "values",
    [{"a": 1}, {"a": 1, "id": 2, "c": 3}, {"a": 1, "c": 3}],
    ids=["missing", "unknown", "misnamed"],
)
def test_a_call_must_name_every_value_and_no_other(values: dict[str, object]) -> None:
    statement = Statement("SELECT :a, :id")
    with pytest.raises(TypeError, match="statement values"):
        statement.args(**values)
