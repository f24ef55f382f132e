#!/usr/bin/env python3
"""One hostile device against a real tipsync-server (issue 59, items 1 and 2), from outside.

  python3 bench/hostile-device.py --server .build-release/release/tipsync-server [--runs 3]

Memory: the device pushes 11,000 changes of ~1 KB (distinct ids, so compaction keeps them), then opens
200 live streams at distinct cursors (limit=5000) and never reads them; the server's resident memory
is sampled every 200 ms for 45 s (past the 30 s stall bound).

Event loop: four devices of other accounts push one change every 100 ms for 15 s and their latency is
recorded, alone and while the hostile device (a process of its own, so that its threads do not
share the victims' interpreter lock) re-sends, on two keep-alive connections, a 4 KB gzip
body that inflates to a 4 MB push (one change whose value is 2 million zeros: refused `422` since
protocol revision 2.7 bounds a change to 64 KiB; before, stored once and a duplicate after), as fast as
its answers come.

The other costly requests of the outside attack run the same way (`--attacks`): `batch` re-sends a
1,000-change push (~120 KB; duplicates after the first), `deep` a body nested 100,000 arrays deep
(refused 400), `streams` opens live streams at distinct cursors of its 11,000-change log
(limit=5000) on two connections at a time, reads up to 8 MiB of each as fast as it comes and
closes it (issue 74, item 2: every page of a stream at its own cursor is a store read no other
stream shares). Each attack's victims
are measured in a window of their own.

Stdlib only; prints one line per figure. The server runs with its default settings.
"""
import argparse, gzip, json, multiprocessing, os, re, socket, subprocess, sys, tempfile, threading, time


def hlc(ms):
    return "%012x-0000" % ms


def request(sock, method, path, token, body=b"", headers=()):
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    for h in headers:
        head += h + "\r\n"
    sock.sendall(head.encode() + b"\r\n" + body)
    return read_response(sock)


def read_response(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    status = int(head.split(b" ")[1])
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(rest) < length:
        rest += sock.recv(65536)
    return status, rest[:length]


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024


def metric(port, name):
    sock = connect(port)
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    text = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        text += chunk
    for line in text.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def hostile(port, token, body, extra, stop, report):
    """The hostile device: two keep-alive connections re-sending `body` as fast as answers come."""
    lock, totals = threading.Lock(), {"sent": 0, "answers": {}}

    def attack():
        sock = connect(port)
        head = (f"POST /v1/push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n")
        message = (head + "".join(h + "\r\n" for h in extra) + "\r\n").encode() + body
        while not stop.is_set():
            sock.sendall(message)
            status, _ = read_response(sock)
            with lock:
                totals["sent"] += 1
                totals["answers"][status] = totals["answers"].get(status, 0) + 1
    threads = [threading.Thread(target=attack) for _ in range(2)]
    for t in threads: t.start()
    for t in threads: t.join()
    report.put((totals["sent"], totals["answers"]))


def hostile_streams(port, token, generation, end, stop, report):
    """The hostile device: two connections at a time, each opening a live stream at a cursor of its
    own, reading up to 8 MiB of it and closing it, as fast as answers come."""
    lock, totals = threading.Lock(), {"sent": 0, "answers": {}, "bytes": 0}

    def attack(offset):
        position = offset
        while not stop.is_set():
            position = (position + 97) % end
            sock = connect(port)
            sock.sendall((f"GET /v1/live?cursor={generation}.{position}&limit=5000 HTTP/1.1\r\nHost: x\r\n"
                          f"Authorization: Bearer {token}\r\n\r\n").encode())
            data = b""
            try:
                received = 0
                while received < 8 << 20 and not stop.is_set():
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        break
                    if len(data) < 64:
                        data += chunk[:64]
                    received += len(chunk)
            except OSError:
                pass
            sock.close()
            status = int(data.split(b" ")[1]) if data.startswith(b"HTTP/1.1 ") else 0
            with lock:
                totals["sent"] += 1
                totals["bytes"] += received
                totals["answers"][status] = totals["answers"].get(status, 0) + 1
    threads = [threading.Thread(target=attack, args=(i * 5000,)) for i in range(2)]
    for t in threads: t.start()
    for t in threads: t.join()
    report.put((totals["sent"], {**totals["answers"], "MiB read": totals["bytes"] >> 20}))


def fill(port, token):
    """11,000 changes of ~1 KB in the hostile device's log (distinct ids: compaction keeps them);
    returns the log's generation and end."""
    sock = connect(port)
    padding = "x" * 1000
    status, body = request(sock, "GET", "/v1/pull?limit=1", token)
    seq = json.loads(body).get("highestSeq") or 0  # what the attacks stored
    for batch in range(22):
        now = int(time.time() * 1000)
        changes = []
        for _ in range(500):
            seq += 1
            changes.append({"device": "phone", "seq": seq, "hlc": hlc(now), "kind": "parameter", "id": f"p{seq}", "value": padding})
        while True:  # within the device's change budget (1,000 a second): wait as told
            status, body = request(sock, "POST", "/v1/push", token, json.dumps({"changes": changes}).encode())
            if status != 429:
                break
            time.sleep(1)
        assert status == 200, (status, body)
    status, body = request(sock, "GET", "/v1/pull?limit=1", token)
    cursor = json.loads(body)["cursor"]
    sock.close()
    return cursor.split(".")[0], seq


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--port", type=int, default=18931)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--server-arg", action="append", default=[], help="passed to `serve` (repeatable)")
    parser.add_argument("--attacks", default="gzip,batch,deep", help="comma-separated: gzip, batch, deep, streams")
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="tipsync-hostile-")
    database = f"sqlite:{directory}/server.sqlite"

    def cli(*words):
        return subprocess.run([args.server, *words, "--database", database], check=True, capture_output=True, text=True).stdout.strip()

    tokens = {}
    for account in ["hostile", "v0", "v1", "v2", "v3"]:
        cli("accounts", "create", account)
        tokens[account] = cli("tokens", "create", "--account", account, "--device", "phone")
    server = subprocess.Popen([args.server, "serve", "--http-port", str(args.port), "--database", database, "--log-level", "error", *args.server_arg],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                connect(args.port).close()
                break
            except OSError:
                time.sleep(0.05)
        base = rss(server.pid)

        # Event loop: victims alone, then beside the gzip resends.
        def victims(seconds, results):
            def run(account):
                sock = connect(args.port)
                seq = results.setdefault(("seq", account), 0)
                latencies = results.setdefault(account, [])
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    seq += 1
                    now = int(time.time() * 1000)
                    body = json.dumps({"changes": [{"device": "phone", "seq": seq, "hlc": hlc(now), "kind": "donation",
                                                    "event": "e", "id": f"phone:{seq}", "date": now}]}).encode()
                    start = time.perf_counter()
                    status, _ = request(sock, "POST", "/v1/push", tokens[account], body)
                    latencies.append((time.perf_counter() - start) * 1000)
                    assert status == 200, status
                    time.sleep(0.1)  # a busy device: ten changes a second, within its request budget
                results[("seq", account)] = seq
            threads = [threading.Thread(target=run, args=(a,)) for a in ["v0", "v1", "v2", "v3"]]
            for t in threads: t.start()
            for t in threads: t.join()
            return [x for a in ["v0", "v1", "v2", "v3"] for x in results[a]]

        filled = None
        if "streams" in args.attacks.split(","):
            time.sleep(10)  # the change budget the fill spends refills before the victims' windows
            filled = fill(args.port, tokens["hostile"])
        results = {}
        victims(3, {})  # warm-up: token caches, connections
        alone = victims(args.seconds, results)
        now = int(time.time() * 1000)
        bomb_json = json.dumps({"changes": [{"device": "phone", "seq": 1, "hlc": hlc(now), "kind": "parameter",
                                             "id": "zz", "value": [0] * 2_090_000}]}, separators=(",", ":")).encode()
        # From seq 1: a server that refuses the bomb's 4 MB change (protocol.md §3) stored nothing of it.
        batch_json = json.dumps({"changes": [{"device": "phone", "seq": 1 + i, "hlc": hlc(now), "kind": "donation",
                                              "event": "e", "id": f"phone:{1 + i}", "date": now} for i in range(1000)]},
                                separators=(",", ":")).encode()
        deep_json = b'{"changes":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        attacks = {
            "gzip": (gzip.compress(bomb_json, 9), ["Content-Encoding: gzip"],
                     f"a {len(gzip.compress(bomb_json, 9))} B gzip body inflating to {len(bomb_json)} B"),
            "batch": (batch_json, [], f"a 1,000-change push of {len(batch_json)} B"),
            "deep": (deep_json, [], f"{len(deep_json)} B of JSON nested 100,000 deep"),
        }
        print(f"victims alone:        n={len(alone)} p50={percentile(alone, .5):.2f} ms p99={percentile(alone, .99):.2f} ms")
        for name in args.attacks.split(","):
            # The hostile device is a process of its own: its threads never hold the victims'
            # interpreter lock, so the victims' figures are the server's, not Python's.
            stop, report = multiprocessing.Event(), multiprocessing.Queue()
            if name == "streams":
                what = f"live streams at distinct cursors of {filled[1]} changes, up to 8 MiB read of each"
                attacker = multiprocessing.Process(
                    target=hostile_streams, args=(args.port, tokens["hostile"], filled[0], filled[1], stop, report))
            else:
                body, extra, what = attacks[name]
                attacker = multiprocessing.Process(target=hostile, args=(args.port, tokens["hostile"], body, extra, stop, report))
            attacker.start()
            for account in ["v0", "v1", "v2", "v3"]: results[account] = []  # this window's latencies only
            beside = victims(args.seconds, results)
            stop.set()
            sent, answers = report.get()
            attacker.join()
            print(f"{name}: {what}; sent {sent} in {args.seconds:.0f} s on 2 connections, answers {dict(sorted(answers.items(), key=lambda item: str(item[0])))}")
            print(f"victims beside {name}: n={len(beside)} p50={percentile(beside, .5):.2f} ms p99={percentile(beside, .99):.2f} ms")
            time.sleep(10)  # the hostile device's budget refills a little; the victims' next window starts clean

        # Memory: 11,000 changes of ~1 KB, then non-reading streams at distinct cursors.
        if args.streams == 0:
            return
        generation = (filled or fill(args.port, tokens["hostile"]))[0]
        before = rss(server.pid)
        streams = []
        for index in range(args.streams):
            s = connect(args.port)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall((f"GET /v1/live?cursor={generation}.{index * 50}&limit=5000 HTTP/1.1\r\nHost: x\r\n"
                       f"Authorization: Bearer {tokens['hostile']}\r\n\r\n").encode())
            streams.append(s)
        peak, samples = before, []
        end = time.monotonic() + 45
        while time.monotonic() < end:
            value = rss(server.pid)
            peak = max(peak, value)
            samples.append(value)
            time.sleep(0.2)
        mib = 1024 * 1024
        print(f"memory: at start {base / mib:.0f} MiB, after the pushes {before / mib:.0f} MiB, "
              f"peak with {args.streams} non-reading streams {peak / mib:.0f} MiB, after 45 s {samples[-1] / mib:.0f} MiB; "
              f"open streams {metric(args.port, 'tipsync_live_connections')}, "
              f"stalled {metric(args.port, 'tipsync_live_streams_stalled_total')}")
        for s in streams: s.close()
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
