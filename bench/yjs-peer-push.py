#!/usr/bin/env python3
"""The Yjs peer's single-change push, for issue 77's side-by-side figure (BENCHMARKS.md).

Runs the Yjs sync server the issue compared with (pycrdt-websocket, its document in memory, on
`websockets` and uvloop) in a process of its own, then one device that makes one change at a time
(one map entry set in its own transaction, sent as one Yjs update message) over one kept connection,
and one other device in the same room that receives each. A change is sent once the other device has
the one before: every message is one change, as `tipsync-bench push-ingest --devices 1 --batch-size
1` sends one push per answer. Reported: the server process's CPU time (from /proc) per change.

With `--unpaced` the device sends every change at once and the run ends when the other device has
them all (the server then reads several messages per wake-up). With `--receivers 1002` the room
holds 1,002 other devices and each change is sent once every one has the one before: the fan-out
that `tipsync-bench live-delivery --devices 1002 --changes 400 --paced` measures on our side.

Needs Python 3.11 and `pip install pycrdt-websocket websockets uvloop` (pycrdt-websocket 0.16.5,
pycrdt 0.14.13, websockets 17.4, uvloop 0.23.0 were measured); not part of CI.

    python3 bench/yjs-peer-push.py --changes 20000 [--unpaced]
    python3 bench/yjs-peer-push.py --changes 400 --receivers 1002
"""

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time


def serve(port: int) -> None:
    import uvloop
    from pycrdt import Channel
    from pycrdt.websocket import WebsocketServer
    from websockets.asyncio.server import serve as ws_serve

    class Connection(Channel):
        def __init__(self, websocket):
            self._websocket = websocket

        @property
        def path(self) -> str:
            return self._websocket.request.path

        def __aiter__(self):
            return self

        async def __anext__(self) -> bytes:
            try:
                return await self.recv()
            except Exception:
                raise StopAsyncIteration()

        async def send(self, message: bytes) -> None:
            await self._websocket.send(message)

        async def recv(self) -> bytes:
            return bytes(await self._websocket.recv())

    async def main() -> None:
        async with WebsocketServer(log=None) as server:

            async def handler(websocket):
                await server.serve(Connection(websocket))

            async with ws_serve(handler, "127.0.0.1", port, compression=None):
                print("ready", flush=True)
                await asyncio.Future()

    uvloop.run(main())


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def drive(port: int, server_pid: int, changes: int, paced: bool, receivers: int) -> None:
    from contextlib import AsyncExitStack

    from pycrdt import Doc, Map, YMessageType, YSyncMessageType, create_update_message
    from websockets.asyncio.client import connect

    url = f"ws://127.0.0.1:{port}/room"
    async with AsyncExitStack() as stack:
        device = await stack.enter_async_context(connect(url, compression=None, max_size=None))
        others = [
            await stack.enter_async_context(connect(url, compression=None, max_size=None)) for _ in range(receivers)
        ]
        # Let the server's room greet each (its sync step 1) before measuring.
        for connection in [device, *others]:
            await connection.recv()
        doc = Doc()
        entries = doc.get("tips", type=Map)
        updates: list[bytes] = []
        doc.observe(lambda event: updates.append(event.update))
        received = 0
        target = 0
        reached = asyncio.Event()

        async def receive(other) -> None:
            nonlocal received
            async for message in other:
                message = bytes(message)
                if message[0] == YMessageType.SYNC and message[1] == YSyncMessageType.SYNC_UPDATE:
                    received += 1
                    if received >= target:
                        reached.set()

        tasks = [asyncio.create_task(receive(other)) for other in others]
        before = cpu_seconds(server_pid)
        started = time.monotonic()
        for index in range(changes):
            entries[f"tip-{index % 100}"] = {"dismissed": True, "seq": index}
            update = updates.pop()
            if paced:
                target = (index + 1) * receivers
                reached.clear()
            await device.send(create_update_message(update))
            if paced:
                await reached.wait()
        target = changes * receivers
        while received < target:
            reached.clear()
            await reached.wait()
        elapsed = time.monotonic() - started
        server_cpu = cpu_seconds(server_pid) - before
        for task in tasks:
            task.cancel()
        mode = "unpaced" if not paced else "paced"
        print(
            f"yjs-peer-push {mode} changes={changes} receivers={receivers}: {elapsed:.2f} s, "
            f"{changes / elapsed:.0f} changes/s; server CPU {server_cpu / changes * 1e6:.1f} µs per change "
            f"({server_cpu / (changes * receivers) * 1e6:.1f} µs per delivered copy)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=20000)
    parser.add_argument("--unpaced", action="store_true")
    parser.add_argument("--receivers", type=int, default=1, help="other devices in the room, each receiving every change")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve:
        serve(arguments.serve)
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        import uvloop

        uvloop.run(drive(port, server.pid, arguments.changes, not arguments.unpaced, arguments.receivers))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
