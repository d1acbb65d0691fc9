"""Times command start → PLAYING for castprep cast and for pychromecast's play_media.

Both senders run as fresh processes against the same emulator and URL, alternating, so
machine load affects both alike. The clock starts before the process is spawned and stops
when the process prints its PLAYING line (castprep prints the status line once the device
reports PLAYING; the pychromecast script prints one when its media controller sees it).
"""
import statistics
import subprocess
import sys
import time

castprep, port, url, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])

PYCHROMECAST = r'''
import sys, threading, uuid, pychromecast
port, url = int(sys.argv[1]), sys.argv[2]
cast = pychromecast.get_chromecast_from_host(("127.0.0.1", port, uuid.uuid4(), "Chromecast", "Bench TV"), tries=1, timeout=10)
cast.wait(timeout=10)
playing = threading.Event()
# The previous run's media may still be PLAYING: only a new media session playing this URL counts.
before = cast.media_controller.status.media_session_id
class Listener:
    def new_media_status(self, status):
        if status.player_state == "PLAYING" and status.media_session_id != before and status.content_id == url:
            playing.set()
    def load_media_failed(self, queue_item_id, error_code):
        print("FAILED", error_code, flush=True)
        playing.set()
cast.media_controller.register_status_listener(Listener())
cast.media_controller.play_media(url, "video/mp4", stream_type="BUFFERED", title="Bench")
if playing.wait(30):
    print("PLAYING", flush=True)
cast.disconnect(timeout=2)
'''


def timed(command):
    """Seconds from spawn to the first stdout line containing PLAYING, or None."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    elapsed = None
    for line in process.stdout:
        if "PLAYING" in line and elapsed is None:
            elapsed = time.monotonic() - start
    process.wait(timeout=60)
    return elapsed


ours, theirs, failures = [], [], 0
for _ in range(runs):
    a = timed([castprep, "cast", "--host", f"127.0.0.1:{port}", url])
    b = timed([sys.executable, "-c", PYCHROMECAST, str(port), url])
    for value, bucket in ((a, ours), (b, theirs)):
        if value is None:
            failures += 1
        else:
            bucket.append(value)

if not ours or not theirs:
    print(f"cast bench: no successful runs (castprep {len(ours)}, pychromecast {len(theirs)})")
    sys.exit(1)
ours_median, theirs_median = statistics.median(ours), statistics.median(theirs)
print(f"command start → PLAYING on the emulator, {runs} runs each, median (min):")
print(f"  castprep cast:            {ours_median * 1000:7.0f} ms ({min(ours) * 1000:.0f} ms)")
print(f"  pychromecast play_media:  {theirs_median * 1000:7.0f} ms ({min(theirs) * 1000:.0f} ms)")
print(f"  castprep is {theirs_median / ours_median:.1f}× faster; failed runs: {failures}")
sys.exit(1 if failures else 0)
