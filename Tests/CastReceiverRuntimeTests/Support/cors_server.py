"""A loopback HTTP server for the receiver fetch tests.

Serves a directory on 127.0.0.1 (port printed on stdout). Paths under /cors/ answer with
Access-Control-Allow-Origin: *, paths under /plain/ without it, like a server someone forgot
to configure (OPTIONS preflights likewise: answered under /cors/, 405 elsewhere). Single byte
ranges are honoured (open, closed and suffix; 416 past the end). /redirect/<path> answers 302
to /<path> (the redirect itself allows CORS), and /stall/ accepts the request and answers
nothing for 30 seconds. Every request is logged as one line: method, path, Origin, Range.
The server exits when the process that started it does, removing the directory and log.
"""
import http.server, os, shutil, sys, time

root, log_path = os.path.realpath(sys.argv[1]), sys.argv[2]
log = open(log_path, "a", buffering=1)
types = {".mp4": "video/mp4", ".m4s": "video/mp4", ".m3u8": "application/vnd.apple.mpegurl", ".ts": "video/mp2t",
         ".mpd": "application/dash+xml", ".vtt": "text/vtt; charset=utf-8", ".srt": "application/x-subrip"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_OPTIONS(self):
        """A preflight: answered properly under /cors/, refused elsewhere like an unconfigured server."""
        log.write(f"OPTIONS {self.path} {self.headers.get('Origin')} {self.headers.get('Access-Control-Request-Headers')}\n")
        self.send_response(204 if self.path.startswith("/cors/") else 405)
        if self.path.startswith("/cors/"):
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
            self.send_header("Access-Control-Allow-Headers", "Range, Content-Type, Accept-Encoding")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        log.write(f"GET {self.path} {self.headers.get('Origin')} {self.headers.get('Range')}\n")
        if self.path.startswith("/stall/"):
            time.sleep(30)
            return
        if self.path.startswith("/redirect/"):
            self.send_response(302)
            self.send_header("Location", self.path[len("/redirect"):])
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = os.path.normpath(os.path.join(root, self.path.lstrip("/").split("?")[0]))
        if not path.startswith(root) or not os.path.isfile(path):
            body = b"not found"
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        with open(path, "rb") as handle:
            data = handle.read()
        status, content_range = 200, None
        requested = self.headers.get("Range", "")
        if requested.startswith("bytes=") and "," not in requested:
            first, _, last = requested[len("bytes="):].partition("-")
            if first == "" and last.isdigit():
                start = max(0, len(data) - int(last))
                end = len(data) - 1
            elif first.isdigit():
                start = int(first)
                end = min(int(last), len(data) - 1) if last.isdigit() else len(data) - 1
            else:
                start, end = 0, len(data) - 1
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                if self.path.startswith("/cors/"):
                    self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                return
            status, content_range = 206, f"bytes {start}-{end}/{len(data)}"
            data = data[start:end + 1]
        self.send_response(status)
        if content_range:
            self.send_header("Content-Range", content_range)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", types.get(os.path.splitext(path)[1], "application/octet-stream"))
        if self.path.startswith("/cors/"):
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Expose-Headers", "Content-Length, Content-Range, Accept-Ranges")
        # Chunked for playlists, so the client's chunked reader is exercised too.
        if path.endswith(".m3u8"):
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for offset in range(0, len(data), 7):
                piece = data[offset:offset + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
# Never outlive the test run: stop when the parent process goes, or after 10 minutes.
parent = os.getppid()
deadline = time.time() + 600
server.timeout = 0.5
while time.time() < deadline and os.getppid() == parent:
    server.handle_request()
shutil.rmtree(root, ignore_errors=True)
try:
    os.remove(log_path)
except OSError:
    pass
