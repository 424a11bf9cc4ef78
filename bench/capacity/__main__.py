"""`python -m bench.capacity`: the run; with `--load-worker`, one of its load
processes instead (see `worker`)."""

from __future__ import annotations

from collections.abc import Sequence

from bench.capacity.options import options
from bench.capacity.runner import run
from bench.capacity.worker import work
from services.common import eventloop


def main(argv: Sequence[str] | None = None) -> None:
    args = options(argv)
    eventloop.run(work(args) if args.load_worker else run(args))


if __name__ == "__main__":
    main()
