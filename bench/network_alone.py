"""The loopback server and the openai provider's transport alone, without the harness.

``bench/server.py`` (50 ms latency) is hammered by the provider's ``direct`` transport
(``DirectPost.post``, one request per call, C in flight, no trials, evidence or scores)
in a fresh process, and the same calls go through ``OpenAIAPI.generate`` (request
encoded, answer parsed into a ``ModelOutput``), then through ``generate`` on the SDK's
aiohttp transport (``sdk``: what every call cost before the direct transport; the
imports of the SDK and aiohttp are counted, as they are in ``network.py``; so is the
first connection of each of the C). Per connection count: calls/s and its
share of the C / 50 ms limit, client CPU per call (getrusage of the client process), and
the server's CPU per request and busy share (its ``/stats``). It shows whether the
server can be the bottleneck of ``network.py`` and what a call costs the client with
nothing of the harness around it. The client runs on the event loop a run gets
(``ASSAY_EVENT_LOOP``: uvloop's when it is installed).

    python bench/network_alone.py [--connections 200,500] [--calls 20000]
                                  [--modes transport,generate,sdk]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def _child(url: str, calls: int, connections: int, mode: str) -> dict[str, float]:
    """Run in the measured process: *calls* calls, *connections* at a time."""
    import asyncio

    from assay.model import ChatMessage, GenerateConfig
    from assay.model._openai import OpenAIAPI

    usage0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    transport = "aiohttp" if mode == "sdk" else "direct"
    settings = GenerateConfig(max_connections=connections)
    api = OpenAIAPI("bench", settings, url, "sk-x", transport=transport)
    config = GenerateConfig()
    body = b'{"model":"bench","messages":[{"role":"user","content":"question 1"}]}'

    async def worker(count: int) -> None:
        messages = [ChatMessage(role="user", content="question 1")]
        for _ in range(count):
            if mode == "transport":
                direct = api._direct or api._open_direct()
                await direct.post(body, None)
            else:
                await api.generate(messages, [], config)

    async def main() -> None:
        each, extra = divmod(calls, connections)
        counts = [each + (1 if i < extra else 0) for i in range(connections)]
        await asyncio.gather(*(worker(c) for c in counts))
        await api.aclose()

    from assay._event_loop import run

    run(main)  # on the loop a run gets (uvloop's when installed; ASSAY_EVENT_LOOP)
    usage1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    user, sys_ = usage1.ru_utime - usage0.ru_utime, usage1.ru_stime - usage0.ru_stime
    return {"wall_s": t1 - t0, "user_s": user, "sys_s": sys_}


def measure(connections: list[int], calls: int, modes: list[str]) -> None:
    sys.path.insert(0, str(BENCH))
    from network import LATENCY, Server

    load = os.getloadavg()[0]
    print(f"load average {load:.1f} at the start")
    with Server() as server:
        for c in connections:
            for mode in modes:
                before = server.stats(reset=True)
                argv = [
                    sys.executable,
                    __file__,
                    "--child",
                    server.base_url,
                    str(calls),
                    str(c),
                    mode,
                ]
                out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
                result = json.loads(out.strip().splitlines()[-1])
                after = server.stats()
                served = after["requests"] - before["requests"]
                server_cpu = after["cpu_s"] - before["cpu_s"]
                rate = calls / result["wall_s"]
                user, kernel = (1e6 * result[k] / calls for k in ("user_s", "sys_s"))
                print(
                    f"{c} connections, {mode:9}: {rate:,.0f} calls/s "
                    f"({100 * rate / (c / LATENCY):.0f}% of {c / LATENCY:,.0f}/s), client CPU "
                    f"{user + kernel:.0f} µs/call (user {user:.0f}, sys {kernel:.0f}); server "
                    f"{1e6 * server_cpu / served:.0f} µs/request, "
                    f"busy {100 * server_cpu / result['wall_s']:.0f}% of one core"
                )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        url, calls, connections, mode = sys.argv[2:6]
        print(json.dumps(_child(url, int(calls), int(connections), mode)))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", default="200,500")
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--modes", default="transport,generate,sdk")
    args = parser.parse_args()
    measure([int(c) for c in args.connections.split(",")], args.calls, args.modes.split(","))


if __name__ == "__main__":
    main()
