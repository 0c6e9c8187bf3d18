"""The ``direct`` transport's pool (``model/_openai_direct.DirectPost``) on its own: it
never opens more than its *connections* sockets, however many calls come at once (the
others wait their turn, first come first served), and a call cancelled while it waits
for a socket leaves no slot taken. The pool counts its sockets itself (no
``asyncio.Semaphore``: a call with a socket free makes no coroutine for it).

The tests wait with ``anyio.wait_all_tasks_blocked()`` (every other task has gone as far
as it can), never a fixed sleep.
"""

from __future__ import annotations

from typing import Any

import anyio

from assay.model._openai_direct import DirectPost
from tests.model.test_openai_direct import BODY, RawServer, framed


def pool(url: str, connections: int) -> DirectPost:
    return DirectPost(f"{url}/chat/completions", {}, connections, url, str)


def test_calls_beyond_the_pool_wait_for_a_socket_and_reuse_it() -> None:
    async def main() -> tuple[list[int], RawServer, DirectPost]:
        async with RawServer([framed()] * 7) as server:
            direct = pool(server.url, 2)
            statuses: list[int] = []

            async def call(n: int) -> None:
                answer = await direct.post(b'{"n":%d}' % n, 10.0)
                assert answer.content == BODY
                statuses.append(answer.status_code)

            with anyio.fail_after(30):  # a slot lost on the way would leave a call waiting
                async with anyio.create_task_group() as group:
                    for n in range(7):
                        group.start_soon(call, n)
            await direct.aclose()
            return statuses, server, direct

    statuses, server, direct = anyio.run(main)
    assert statuses == [200] * 7
    assert server.connections == 2  # never more sockets than the pool's size
    assert (direct._held, len(direct._waiting)) == (0, 0)


def test_a_call_cancelled_while_waiting_for_a_socket_leaves_it_free() -> None:
    held: list[Any] = []  # the writer of the answer the first call waits for

    async def main() -> tuple[list[str], RawServer]:
        async with RawServer([held.append, framed()]) as server:
            direct = pool(server.url, 1)
            outcomes: list[str] = []

            async def call(name: str) -> None:
                await direct.post(b"{}", 10.0)
                outcomes.append(name)

            async def cancelled(scope: anyio.CancelScope) -> None:
                with scope:
                    await call("cancelled")

            async with anyio.create_task_group() as group:
                group.start_soon(call, "first")
                await anyio.wait_all_tasks_blocked()  # it holds the one socket
                scope = anyio.CancelScope()
                group.start_soon(cancelled, scope)
                await anyio.wait_all_tasks_blocked()
                assert len(direct._waiting) == 1  # the second call waits for the socket
                scope.cancel()
                await anyio.wait_all_tasks_blocked()
                assert len(direct._waiting) == 0
                held[0].write(framed())  # the first call's answer
            with anyio.fail_after(10):  # a leaked slot would keep this call waiting
                await call("after")
            await direct.aclose()
            return outcomes, server

    outcomes, server = anyio.run(main)
    assert outcomes == ["first", "after"]
    assert server.connections == 1
