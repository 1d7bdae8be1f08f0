#!/usr/bin/env python3
"""A loopback HTTP server that answers with chosen status codes, for verify.sh.

  /status/NNN[/anything]   answers NNN (408, 425, 429 and 503 carry `Retry-After: 1`)
  /flaky/KEY/K/NNN[/...]   answers NNN to the first K requests for KEY, then 200
  /close[/...]             closes the connection without a reply
  /hang[/...]              waits 10 s before answering 200 (client timeouts)
  CONNECT sNNN.invalid:443 as a proxy, answers NNN (no tunnel is made)
  /files/PATH              the file PATH under argv[3] (if given); a missing file whose
                           path has a segment `statusNNN` answers NNN, else 404
  .../statusNNN/...         (any other path with such a segment) answers NNN, with an
                           OCI registry error body, for `docker pull 127.0.0.1:PORT/statusNNN/img`
  anything else            200 "ok"

Binds 127.0.0.1 on a free port and writes the port to the file named by argv[1].
Exits by itself after argv[2] seconds (default 300), so it never outlives a run.
"""
import http.server, os, sys, threading, time, collections

COUNTS = collections.Counter()
LOCK = threading.Lock()
# the registry API's error codes (OCI distribution spec) for the /v2/ paths of docker pull
ERRCODES = {401: "UNAUTHORIZED", 403: "DENIED", 404: "MANIFEST_UNKNOWN", 429: "TOOMANYREQUESTS"}
REASONS = {408: "Request Timeout", 425: "Too Early", 429: "Too Many Requests"}

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, body=b"", extra=()):
        self.send_response(code, REASONS.get(code))
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True

    def do_GET(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts[0] == "status" and len(parts) > 1 and parts[1].isdigit():
            code = int(parts[1])
            extra = [("Retry-After", "1")] if code in (408, 425, 429, 503) else []
            return self.answer(code, b"status %d\n" % code, extra)
        if parts[0] == "flaky" and len(parts) > 3:
            key, k, code = parts[1], int(parts[2]), int(parts[3])
            with LOCK:
                COUNTS[key] += 1
                n = COUNTS[key]
            if n <= k:
                return self.answer(code, b"flaky %d\n" % code, [("Retry-After", "1")])
            return self.answer(200, b"ok\n")
        if parts[0] == "files" and ROOT:
            rel = os.path.normpath("/".join(parts[1:])).lstrip("./")
            full = os.path.join(ROOT, rel)
            if os.path.isdir(full):
                full = os.path.join(full, "index.html")
            if os.path.realpath(full).startswith(os.path.realpath(ROOT)) and os.path.isfile(full):
                kind = "text/html" if full.endswith(".html") else "application/octet-stream"
                with open(full, "rb") as f:
                    return self.answer(200, f.read(), [("Content-Type", kind)])
            for seg in parts[1:]:
                if seg.startswith("status") and seg[6:].isdigit():
                    return self.answer(int(seg[6:]), b"")
            return self.answer(404, b"")
        for seg in parts:
            if seg.startswith("status") and seg[6:].isdigit():
                code = int(seg[6:])
                extra = [("Retry-After", "1")] if code in (408, 425, 429, 503) else []
                return self.answer(code, b'{"errors":[{"code":"%s","message":"status %d"}]}\n'
                                   % (ERRCODES.get(code, "UNKNOWN").encode(), code), extra)
        if parts[0] == "close":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if parts[0] == "hang":
            time.sleep(10)
            return self.answer(200, b"late\n")
        return self.answer(200, b"ok\n")

    do_HEAD = do_GET
    do_POST = do_GET

    def do_CONNECT(self):
        # As a proxy: `CONNECT sNNN.invalid:443` answers NNN (no tunnel is ever made).
        host = self.path.split(":")[0]
        code = int(host[1:4]) if host[:1] == "s" and host[1:4].isdigit() else 403
        extra = [("Retry-After", "1")] if code in (408, 425, 429, 503) else []
        if code == 407:
            extra.append(("Proxy-Authenticate", 'Basic realm="stub"'))
        self.answer(code, b"", extra)

ROOT = sys.argv[3] if len(sys.argv) > 3 else None

def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    life = float(sys.argv[2]) if len(sys.argv) > 2 else 300
    threading.Timer(life, lambda: os._exit(0)).start()
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, sys.argv[1])
    srv.serve_forever()

if __name__ == "__main__":
    main()
