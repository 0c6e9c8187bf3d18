"""Judging after the next request (``run/_judges``): a worker hands what is left of its
trial once its answer is in, and its next trial starts before that is judged. Each test
drives the real executor with items whose answers and judgings the test controls, so
what is asserted is the order things ran in, never how long anything took."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import pytest

from assay.run import execute

Judging = Callable[[], Awaitable[None]]


class Log:
    """What ran, in order: ``("start", i)``, ``("answer", i)``, ``("judged", i)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def at(self, kind: str, item: int) -> int:
        return self.events.index((kind, item))

    def work(self, judged: Callable[[int], Awaitable[None]] | None = None):  # type: ignore[no-untyped-def]
        async def work(item: int) -> Judging:
            self.events.append(("start", item))
            await anyio.lowlevel.checkpoint()  # the request goes out; the answer comes
            self.events.append(("answer", item))

            async def judging() -> None:
                if judged is not None:
                    await judged(item)
                self.events.append(("judged", item))

            return judging

        return work


@pytest.mark.doc(
    "docs/cli.md",
    "A trial whose answer is in gives its place to the next trial before it is judged",
)
def test_the_next_trial_starts_before_the_last_one_is_judged() -> None:
    log, limit = Log(), 2
    anyio.run(execute, range(6), log.work(), limit)
    assert sorted(i for kind, i in log.events if kind == "judged") == list(range(6))
    judged = [i for kind, i in log.events if kind == "judged"]
    assert judged == sorted(judged)  # in the order the answers came
    # both workers' next trials started before the first judging: the loop sent the
    # next requests, then judged the trials whose answers it had
    assert log.at("start", 2) < log.at("judged", 0)
    assert log.at("start", 3) < log.at("judged", 0)
    for item in range(6):
        assert log.at("answer", item) < log.at("judged", item)


@pytest.mark.doc("docs/cli.md", "With `-j 1` or a sequential gate, a trial is judged in its place.")
def test_with_one_at_a_time_each_trial_is_judged_before_the_next_starts() -> None:
    log = Log()
    anyio.run(execute, range(3), log.work(), 1)
    assert log.events == [(k, i) for i in range(3) for k in ("start", "answer", "judged")]


@pytest.mark.doc("docs/cli.md", "so up to `-j` more trials are being judged meanwhile")
def test_a_judging_that_waits_keeps_its_judge_and_at_most_limit_are_handed() -> None:
    """Judgings wait (as a model-graded scorer's calls do) until every item has been
    judged or is being judged: past ``limit`` handed, a worker judges its trial itself,
    so at most ``2 × limit`` are judged at once and every one ends (no deadlock)."""
    log, limit, items = Log(), 3, 12
    judging_now, most = [0], [0]
    release = anyio.Event()

    async def judged(item: int) -> None:
        judging_now[0] += 1
        most[0] = max(most[0], judging_now[0])
        if most[0] == 2 * limit:
            release.set()
        await release.wait()
        judging_now[0] -= 1

    async def main() -> None:
        with anyio.fail_after(30):
            await execute(range(items), log.work(judged), limit)

    anyio.run(main)
    assert sorted(i for kind, i in log.events if kind == "judged") == list(range(items))
    assert most[0] == 2 * limit  # limit handed to the judges, limit judged by workers


def test_a_judging_that_raises_fails_the_run_with_its_error() -> None:
    log = Log()

    async def judged(item: int) -> None:
        if item == 2:
            raise ValueError("disk gone")

    with pytest.raises(ValueError, match="disk gone"):
        anyio.run(execute, range(20), log.work(judged), 4)
    assert ("judged", 2) not in log.events
