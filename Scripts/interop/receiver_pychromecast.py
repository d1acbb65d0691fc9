"""pychromecast, a real third-party sender, against `castprep receiver`.

Run it through Scripts/interop/receiver, which makes a private network namespace first:

    Scripts/interop/receiver [CASTPREP_BINARY]

Inside the namespace (only `lo`, multicast on), it starts `castprep serve Samples` and
`castprep receiver --interface lo` with mDNS on, lets pychromecast discover the device with
python-zeroconf, checks the TXT record a Chromecast sends, launches the Default Media Receiver
with play_media, and waits for the player to reach PLAYING; then it checks that the TXT record
now names the running app. A second pass connects through pychromecast's known-host path
(no mDNS), as a user with a fixed IP would. Prints one line per check and `N passed, N failed`.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, threading, time, uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "castprep")
NAME = "Interop TV"
DEVICE_ID = "7c1a2b3c4d5e4f60a1b2c3d4e5f60718"
results = []


def check(label, condition, detail=""):
    results.append(bool(condition))
    print(("ok     " if condition else "FAILED ") + label + ("" if condition or not detail else f" ({detail})"), flush=True)
    return condition


def refuse_outside_namespace():
    names = sorted(name for _, name in socket.if_nameindex())
    if names != ["lo"]:
        print(f"refusing to run: interfaces {names}; run Scripts/interop/receiver, which makes a private network namespace")
        sys.exit(2)


def start(arguments, marker):
    """Starts a castprep process and returns it with the stdout text up to a line containing marker."""
    process = subprocess.Popen([BINARY] + arguments, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.time() + 20
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if marker in line:
            return process, "".join(lines)
    process.kill()
    raise SystemExit(f"{arguments[0]} did not start: {''.join(lines)} {process.stderr.read()}")


def wait_until(predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def sender_corrupted_its_stream(log_path):
    """Whether the emulator dropped a link because the TLS records it read did not decrypt.

    pychromecast writes to its one TLS socket from two threads (the caller's and its socket
    thread, which answers LAUNCH by connecting to the app); when both write at once the records
    interleave, and a Chromecast, like the emulator, drops the link (pychromecast then logs
    "EOF occurred in violation of protocol" and reconnects; reported upstream for real devices).
    """
    try:
        with open(log_path) as log:
            return any("decryption failed or bad record mac" in (json.loads(line).get("note") or "")
                       for line in log if line.strip())
    except (OSError, ValueError):
        return False


def quit_app(cast):
    """Stops the running app. pychromecast writes to its TLS socket from two threads (the
    caller's request and its worker's answer to the app's CLOSE); when the writes collide, the
    ssl module fails one with BAD_LENGTH (seen with real Chromecasts too), pychromecast
    reconnects and the request fails. Once it is connected again the request is asked once more."""
    import pychromecast
    try:
        cast.quit_app()
    except (pychromecast.error.RequestFailed, pychromecast.error.NotConnected) as error:
        print(f"note   quit_app failed ({error}); asked again after pychromecast reconnected", flush=True)
        cast.wait(timeout=10)
        cast.quit_app()


def play(cast, url, label, log_path):
    cast.wait(timeout=15)
    check(f"{label}: pychromecast reads the receiver status", cast.status is not None)
    controller = cast.media_controller
    controller.play_media(url, "video/mp4", stream_type="BUFFERED", title="CastPrep interop")
    controller.block_until_active(timeout=15)
    reached = wait_until(lambda: controller.status.player_state == "PLAYING", 15)
    if not reached and sender_corrupted_its_stream(log_path):
        print(f"interop: {label}: pychromecast's two threads corrupted its TLS stream and the link was dropped; "
              "it has reconnected, so the cast is tried once more", flush=True)
        cast.wait(timeout=15)
        controller.play_media(url, "video/mp4", stream_type="BUFFERED", title="CastPrep interop")
        controller.block_until_active(timeout=15)
        reached = wait_until(lambda: controller.status.player_state == "PLAYING", 15)
    check(f"{label}: the player state reaches PLAYING", reached, f"state {controller.status.player_state}")
    check(f"{label}: the running app is the Default Media Receiver", cast.app_id == "CC1AD845", cast.app_id)
    duration = controller.status.duration
    check(f"{label}: the duration is read from the file (2 s sample)", duration is not None and 1.9 < duration < 2.2, duration)
    return controller


def dump_connection_events(log_path):
    """On a failure: the emulator's own account of each link (opened, ended and why) and the
    receiver-namespace requests, so a link that drops says which side ended it."""
    try:
        with open(log_path) as log:
            entries = [json.loads(line) for line in log if line.strip()]
    except (OSError, ValueError) as error:
        print(f"(no receiver log: {error})")
        return
    print("receiver log, connection events and receiver requests:")
    for entry in entries:
        payload = entry.get("payload") or {}
        if entry.get("direction") == "event" or payload.get("type") in ("LAUNCH", "STOP", "CONNECT", "CLOSE"):
            print("  " + json.dumps(entry, sort_keys=True)[:400])


def main():
    refuse_outside_namespace()
    import pychromecast
    import zeroconf

    log_path = os.path.join(tempfile.mkdtemp(prefix="castprep-interop-"), "receiver.jsonl")
    server, served = start(["serve", "Samples", "--port", "0", "--bind", "127.0.0.1", "--quiet"], "Serving")
    base = served.split(" at ", 1)[1].split(" ", 1)[0]
    receiver, listening = start(
        ["receiver", "--name", NAME, "--id", DEVICE_ID, "--bind", "127.0.0.1", "--port", "8009", "--http-port", "8008",
         "--interface", "lo", "--log", log_path], "mdns:")
    print(listening, end="", flush=True)
    url = base + "h264-aac-faststart.mp4"
    try:
        # Discovery: python-zeroconf on the namespace's loopback, as on a LAN.
        zc = zeroconf.Zeroconf(interfaces=["127.0.0.1"])
        casts, browser = pychromecast.get_listed_chromecasts(friendly_names=[NAME], zeroconf_instance=zc, discovery_timeout=10)
        if check("zeroconf discovery finds the device by its friendly name", len(casts) == 1, f"found {len(casts)}"):
            cast = casts[0]
            info = cast.cast_info
            check("the advertised id is the device UUID", info.uuid == uuid.UUID(DEVICE_ID), info.uuid)
            check("the model is Chromecast (a video device for pychromecast)", info.model_name == "Chromecast" and info.cast_type == "cast",
                  f"{info.model_name} / {info.cast_type}")
            check("host and port come from SRV and A records", (info.host, info.port) == ("127.0.0.1", 8009), f"{info.host}:{info.port}")
            service_name = next(iter(info.services)).name if info.services else None
            record = zc.get_service_info("_googlecast._tcp.local.", service_name, timeout=3000) if service_name else None
            txt = {key.decode(): (value or b"").decode() for key, value in (record.properties if record else {}).items()}
            check("TXT carries id, fn, md, ca, st, rs, ve, ic", all(key in txt for key in ["id", "fn", "md", "ca", "st", "rs", "ve", "ic"]), txt)
            check("TXT says idle before the launch (st=0, rs empty)", txt.get("st") == "0" and txt.get("rs") == "", txt)
            play(cast, url, "discovered", log_path)

            def running_in_txt():
                fresh = zeroconf.ServiceInfo("_googlecast._tcp.local.", service_name)
                if not fresh.request(zc, 1500):
                    return False
                values = {key.decode(): (value or b"").decode() for key, value in fresh.properties.items()}
                return values.get("rs") == "Default Media Receiver" and values.get("st") == "1"
            check("TXT names the running app after the launch (rs, st=1)", wait_until(running_in_txt, 10))
            quit_app(cast)
            cast.disconnect(timeout=5)
        browser.stop_discovery()
        zc.close()

        # Known host: no mDNS, the way a user with a fixed address connects.
        known = pychromecast.get_chromecast_from_host(("127.0.0.1", 8009, uuid.UUID(DEVICE_ID), "Chromecast", NAME), tries=2, timeout=10)
        play(known, url, "known host", log_path)
        known.disconnect(timeout=5)

        with open(log_path) as log:
            entries = [json.loads(line) for line in log if line.strip()]
        check("the log holds the LOAD pychromecast sent", any(e.get("direction") == "in" and (e.get("payload") or {}).get("type") == "LOAD" for e in entries))
        check("the log holds the MEDIA_STATUS the device sent", any(e.get("direction") == "out" and (e.get("payload") or {}).get("type") == "MEDIA_STATUS" for e in entries))
    finally:
        for process in (receiver, server):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    passed = sum(results)
    if passed != len(results):
        dump_connection_events(log_path)
        print(f"the receiver's log is kept in {log_path}")
    else:
        shutil.rmtree(os.path.dirname(log_path), ignore_errors=True)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
