"""A loopback HTTP server for the probe tests: serves a directory with Range support and logs
every request's path and Range header, or (with --stall) accepts connections and never answers.

Hostile paths: /trickle-after-N/PATH serves PATH the first N times it is asked for, then
answers with headers and one byte a second; /self/master.m3u8 is a master playlist whose only
variant is itself."""
import http.server, os, re, socket, sys, threading, time

root, log_path = sys.argv[1], sys.argv[2]
stall = "--stall" in sys.argv

if stall:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    held = []
    deadline = time.time() + 120  # never outlive a test run
    listener.settimeout(1)
    while time.time() < deadline:
        try:
            connection, _ = listener.accept()
            held.append(connection)  # read nothing, answer nothing
        except socket.timeout:
            pass
    sys.exit(0)

log = open(log_path, "a", buffering=1)
counts, counts_lock = {}, threading.Lock()

class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=root, **kwargs)

    def log_message(self, *args):
        pass

    def trickle(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(120):
                self.wfile.write(b"#")
                self.wfile.flush()
                time.sleep(1)  # the server's behaviour under test, not synchronisation
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        if self.path.startswith("/self/"):
            log.write(f"{self.path} -\n")
            body = b"#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nmaster.m3u8\n"
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.apple.mpegurl")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        match = re.match(r"/trickle-after-(\d+)(/.*)$", self.path)
        if match:
            with counts_lock:
                served = counts.get(self.path, 0)
                counts[self.path] = served + 1
            if served >= int(match.group(1)):
                return self.trickle()
            self.path = match.group(2)
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            return self.send_error(404)
        size = os.path.getsize(path)
        header = self.headers.get("Range")
        log.write(f"{self.path} {header}\n")
        start, end = 0, size - 1
        match = re.match(r"bytes=(\d*)-(\d*)$", header or "")
        if match:
            if match.group(1):
                start = int(match.group(1))
                end = int(match.group(2)) if match.group(2) else size - 1
            else:
                start = size - int(match.group(2))
            end = min(end, size - 1)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        else:
            self.send_response(200)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Content-Type", "video/mp4")
        self.end_headers()
        with open(path, "rb") as handle:
            handle.seek(start)
            remaining = end - start + 1
            try:
                while remaining > 0:
                    chunk = handle.read(min(65536, remaining))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    remaining -= len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass

http.server.ThreadingHTTPServer.daemon_threads = True
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Timer(120, server.shutdown).start()  # never outlive a test run
server.serve_forever()
