#!/usr/bin/env python3
"""A scripted HTTP server for the KacheHTTP tests.

Binds 127.0.0.1 on a free port and prints "<port> <pid>" as its first line
of output (the pid is this interpreter's own, which may differ from the
launched process's when python3 is a wrapper script such as a pyenv shim). Every path except the control ones answers according to its query:

  status=N          the status code (default 200)
  cc=VALUE          Cache-Control
  cc_v2=VALUE       Cache-Control from version 2 on (see /__bump)
  etag=auto|VALUE   ETag; auto is "v<version>" (the version starts at 1, see /__bump)
  lm_age=N          Last-Modified: N seconds before the server started, plus
                    1000 seconds per version after the first
  date_offset=N     Date: now + N seconds (default: now)
  expires_delta=N   Expires: Date + N seconds
  expires=VALUE     Expires, verbatim
  age=N             Age
  vary=VALUE        Vary
  echo=NAME         the body includes the request's NAME field
  fail_after=N      requests after the N-th answer 503
  header=NAME:VALUE an extra response field (repeatable)
  size=N            the body is padded to at least N bytes
  fixed=N           the body is N bytes that depend only on their offset:
                    chr(65 + (offset * 7) % 26), the same on every request
  fixed_v2=N        from version 2 on (see /__bump), the body is N such bytes
  ranges=1          a single-range Range request (bytes=a-b, a-, -n) gets a 206
                    with Content-Range, or a 416 when unsatisfiable
  content_location=self|VALUE  Content-Location: the request's own path and query, or VALUE
  delay_after_first=S  requests after the first wait S seconds before answering
  gzip=1            the body is gzip-compressed, with Content-Encoding: gzip
  chunked=1         the body is sent with Transfer-Encoding: chunked
  disconnect_after=N  requests after the N-th get no answer: the server reads
                    the request and closes the connection (the conformance
                    suite's "disconnect", as in stale-close-must-revalidate)
  cut_after=N       the body is cut off: the whole Content-Length is announced,
                    N bytes of the body are sent, and the connection is closed
  stall_after=N     the body stops after its first N bytes until /__release
                    names its path (at most 30 seconds), then the rest follows
                    (a reader can stop or be cancelled while the body is
                    surely still on its way, however slow the machine)

A request whose If-None-Match matches the ETag (or, without an ETag, whose
If-Modified-Since is not before Last-Modified) gets a 304 with the same fields
and no body. Every response has X-Request-Count: the requests to that path so far.

Control paths:
  /__stats?path=P   JSON {"count": requests to P, "last": the last request's fields (lowercased)}
  /__bump?path=P    a new version of P (new ETag and Last-Modified)
  /__release?path=P lets the stalled bodies of P (stall_after) go on, and those to come
  /__advance?seconds=N  moves the server's clock (its Date and Expires fields)
                    N seconds forward, as the tests move their client's clock;
                    it moves by nothing else (it stands at the server's start)

The server exits after --idle-timeout seconds without a request, when the
process --owner-pid (default: its parent) goes away, or when it is terminated.
"""

import argparse
import email.utils
import gzip
import re
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

STARTED = time.time()
LOCK = threading.Lock()
COUNTS = {}
LAST_FIELDS = {}
VERSIONS = {}
LAST_ACTIVITY = [time.monotonic()]
CLOCK_OFFSET = [0.0]
RELEASES = {}


def release_event(path):
    with LOCK:
        return RELEASES.setdefault(path, threading.Event())


def http_date(seconds):
    return email.utils.formatdate(seconds, usegmt=True)


class Handler(BaseHTTPRequestHandler):
    server_version = "KacheHTTPTestServer"

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.handle_any()

    def do_PUT(self):
        self.do_POST()

    def do_DELETE(self):
        self.handle_any()

    def handle_any(self):
        LAST_ACTIVITY[0] = time.monotonic()
        url = urlsplit(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        if url.path == "/__stats":
            path = query.get("path", [""])[0]
            with LOCK:
                answer = {"count": COUNTS.get(path, 0), "last": LAST_FIELDS.get(path, {})}
            return self.reply(200, [("Content-Type", "application/json")], json.dumps(answer).encode())
        if url.path == "/__advance":
            with LOCK:
                CLOCK_OFFSET[0] += float(query.get("seconds", ["0"])[0])
                answer = {"offset": CLOCK_OFFSET[0]}
            return self.reply(200, [("Content-Type", "application/json")], json.dumps(answer).encode())
        if url.path == "/__release":
            release_event(query.get("path", [""])[0]).set()
            return self.reply(200, [("Content-Type", "application/json")], b"{}")
        if url.path == "/__bump":
            path = query.get("path", [""])[0]
            with LOCK:
                VERSIONS[path] = VERSIONS.get(path, 1) + 1
                answer = {"version": VERSIONS[path]}
            return self.reply(200, [("Content-Type", "application/json")], json.dumps(answer).encode())
        with LOCK:
            count = COUNTS.get(url.path, 0) + 1
            COUNTS[url.path] = count
            LAST_FIELDS[url.path] = {name.lower(): value for name, value in self.headers.items()}
            version = VERSIONS.get(url.path, 1)
        self.scripted(url.path, query, count, version)

    def scripted(self, path, query, count, version):
        def one(name):
            values = query.get(name)
            return values[0] if values else None

        # The server's clock stands still, as the client's ManualClock does,
        # and moves only by /__advance: run in real time, it drew away from
        # the client's while a loaded machine stalled a test, and responses
        # looked younger than the tests meant them to be.
        now = STARTED + CLOCK_OFFSET[0]
        date = now + float(one("date_offset") or 0)
        fields = [("Date", http_date(date)), ("X-Request-Count", str(count))]
        cache_control = one("cc")
        if version >= 2 and one("cc_v2") is not None:
            cache_control = one("cc_v2")
        if cache_control is not None:
            fields.append(("Cache-Control", cache_control))
        etag = one("etag")
        if etag == "auto":
            etag = '"v%d"' % version
        if etag is not None:
            fields.append(("ETag", etag))
        last_modified = None
        if one("lm_age") is not None:
            last_modified = int(STARTED - float(one("lm_age")) + (version - 1) * 1000)
            fields.append(("Last-Modified", http_date(last_modified)))
        if one("expires_delta") is not None:
            fields.append(("Expires", http_date(date + float(one("expires_delta")))))
        if one("expires") is not None:
            fields.append(("Expires", one("expires")))
        if one("age") is not None:
            fields.append(("Age", one("age")))
        if one("vary") is not None:
            fields.append(("Vary", one("vary")))
        for extra in query.get("header", []):
            name, _, value = extra.partition(":")
            fields.append((name, value))

        content_location = one("content_location")
        if content_location is not None:
            fields.append(("Content-Location", self.path if content_location == "self" else content_location))
        delay = one("delay_after_first")
        if delay is not None and count > 1:
            time.sleep(min(float(delay), 5.0))

        disconnect_after = one("disconnect_after")
        if disconnect_after is not None and count > int(disconnect_after):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return

        fail_after = one("fail_after")
        if fail_after is not None and count > int(fail_after):
            return self.reply(503, [("Date", http_date(now)), ("X-Request-Count", str(count))], b"unavailable")

        if self.command == "GET" and self.not_modified(etag, last_modified):
            return self.reply(304, fields, b"")

        body = "path=%s count=%d version=%d" % (path, count, version)
        echo = one("echo")
        if echo is not None:
            body += " %s=%s" % (echo.lower(), self.headers.get(echo, "<none>"))
        data = body.encode()
        size = int(one("size") or 0)
        if len(data) < size:
            data += b"." * (size - len(data))
        if one("fixed") is not None:
            data = fixed_bytes(int(one("fixed")))
        if version >= 2 and one("fixed_v2") is not None:
            data = fixed_bytes(int(one("fixed_v2")))
        status = int(one("status") or 200)
        if status in (204, 304):
            data = b""
        requested = self.headers.get("Range")
        if one("ranges") == "1" and status == 200 and requested is not None:
            match = re.fullmatch(r"bytes=(\d*)-(\d*)", requested.strip())
            if match and (match.group(1) or match.group(2)):
                length = len(data)
                if match.group(1):
                    first = int(match.group(1))
                    last = min(int(match.group(2)), length - 1) if match.group(2) else length - 1
                else:
                    first, last = max(0, length - int(match.group(2))), length - 1
                if first >= length or last < first:
                    return self.reply(416, fields + [("Content-Range", "bytes */%d" % length)], b"")
                fields.append(("Content-Range", "bytes %d-%d/%d" % (first, last, length)))
                data = data[first:last + 1]
                status = 206
        if one("gzip") == "1":
            data = gzip.compress(data)
            fields.append(("Content-Encoding", "gzip"))
        self.reply(
            status, fields + [("Content-Type", "text/plain")], data, chunked=one("chunked") == "1",
            cut_after=None if one("cut_after") is None else int(one("cut_after")),
            stall_after=None if one("stall_after") is None else int(one("stall_after")), path=path,
        )

    def not_modified(self, etag, last_modified):
        if_none_match = self.headers.get("If-None-Match")
        if etag is not None and if_none_match is not None:
            tags = [tag.strip() for tag in if_none_match.split(",")]
            return etag in tags or "*" in tags
        if_modified_since = self.headers.get("If-Modified-Since")
        if last_modified is not None and if_modified_since is not None:
            try:
                since = email.utils.parsedate_to_datetime(if_modified_since).timestamp()
            except (TypeError, ValueError):
                return False
            return last_modified <= since
        return False

    def reply(self, status, fields, body, chunked=False, cut_after=None, stall_after=None, path=None):
        self.send_response_only(status)
        for name, value in fields:
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command == "HEAD":
            return
        if chunked:
            if body:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
            self.wfile.write(b"0\r\n\r\n")
        elif body and cut_after is not None:
            self.close_connection = True
            try:
                self.wfile.write(body[:cut_after])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        elif body and stall_after is not None:
            # A client that stopped reading closes the connection during the stall.
            try:
                self.wfile.write(body[:stall_after])
                self.wfile.flush()
                release_event(path).wait(30)
                self.wfile.write(body[stall_after:])
            except OSError:
                self.close_connection = True
        elif body:
            self.wfile.write(body)


def fixed_bytes(count):
    """chr(65 + (offset * 7) % 26) for each offset: a pattern of period 26, repeated."""
    pattern = bytes(65 + (offset * 7) % 26 for offset in range(26))
    return (pattern * (count // 26 + 1))[:count]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch(server, idle_timeout, owner):
    while True:
        time.sleep(0.2)
        if time.monotonic() - LAST_ACTIVITY[0] > idle_timeout or not alive(owner):
            server.shutdown()
            return


def main():
    # A process launched from a test runner may inherit SIGTERM blocked or
    # ignored; the tests stop the server with it, so restore the default.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parser = argparse.ArgumentParser(description="Scripted HTTP server for the KacheHTTP tests")
    parser.add_argument("--idle-timeout", type=float, default=30.0)
    parser.add_argument("--owner-pid", type=int, default=os.getppid())
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], os.getpid(), flush=True)
    threading.Thread(target=watch, args=(server, arguments.idle_timeout, arguments.owner_pid), daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
