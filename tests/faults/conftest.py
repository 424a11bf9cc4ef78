from __future__ import annotations

from pathlib import Path

import pytest

TEST_TIMEOUT_S = 90
"""A fault test that hangs fails instead of stalling the run."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT_S))
