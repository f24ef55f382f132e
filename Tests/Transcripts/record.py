#!/usr/bin/env python3
"""Records what a TipSync client and a server say to each other, for CompatibilityTranscriptTests.

A client released at an earlier protocol revision (the Swift agent built from its tag) talks to a
server through this proxy; every exchange is written to --out as JSON: the request exactly as sent
(method, path, the headers that matter, the body's bytes in base64) and the answer (status, content
type, the body as JSON when it is JSON, inflated first when it was compressed). The replay test sends
the same requests to today's server and checks that each answer still says what the old client read.

    record.py --upstream http://127.0.0.1:8080 --port 8081 --out swift-agent-2.7.json
"""
import argparse, base64, gzip, http.client, json, threading, zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

KEPT_HEADERS = ("authorization", "content-type", "content-encoding", "accept-encoding", "tipsync-context", "user-agent")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", required=True)
    options = parser.parse_args()
    upstream = urlsplit(options.upstream)
    exchanges, lock = [], threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def relay(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {name: value for name, value in self.headers.items() if name.lower() != "host"}
            connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=30)
            connection.request(self.command, self.path, body=body or None, headers=headers)
            answer = connection.getresponse()
            data = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            encoding = (answer.getheader("Content-Encoding") or "").lower()
            plain = gzip.decompress(data) if encoding == "gzip" else zlib.decompress(data) if encoding == "deflate" else data
            try:
                parsed = json.loads(plain) if plain else None
            except ValueError:
                parsed = None
            exchange = {
                "request": {
                    "method": self.command,
                    "path": self.path,
                    "headers": {name.lower(): value for name, value in headers.items() if name.lower() in KEPT_HEADERS},
                    "bodyBase64": base64.b64encode(body).decode() if body else None,
                },
                "response": {"status": answer.status, "contentType": answer.getheader("Content-Type"), "json": parsed},
            }
            with lock:
                exchanges.append(exchange)
                with open(options.out, "w") as file:
                    json.dump({"exchanges": exchanges}, file, indent=1, ensure_ascii=False)
                    file.write("\n")

        do_GET = do_POST = do_PUT = do_DELETE = relay

        def log_message(self, *arguments):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    print(f"recording on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
