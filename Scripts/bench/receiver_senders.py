"""Concurrent Cast senders against `castprep receiver`, for Scripts/bench/receiver.

    python3 receiver_senders.py PORT EMULATOR_PID [SENDERS] [ROUNDS] [PROCESSES]

One sender launches the Default Media Receiver first. Then SENDERS senders, spread over
PROCESSES client processes (default 4: one Python process cannot keep 200 TLS links busy
without becoming the bottleneck it is meant to measure), connect over TLS on 127.0.0.1 and each: CONNECT to receiver-0, receiver GET_STATUS, CONNECT to the app's
transport id, then ROUNDS rounds of a heartbeat PING and a media GET_STATUS (plus a receiver
GET_STATUS every fifth round), 50–150 ms apart, answering the device's own PINGs throughout.
Every request is timed from send to its answer (matched by requestId; PONG for PING). Prints the
figures and exits 1 if anything went wrong. Every connection goes to 127.0.0.1 only, and the
run is bounded (60 s per request, a fixed number of rounds).
"""
import asyncio, json, multiprocessing, random, ssl, statistics, struct, sys, time

PORT, PID = int(sys.argv[1]), int(sys.argv[2])
SENDERS = int(sys.argv[3]) if len(sys.argv) > 3 else 200
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 20
PROCESSES = int(sys.argv[5]) if len(sys.argv) > 5 else 4
TIMEOUT = 60
NS_CONNECTION = "urn:x-cast:com.google.cast.tp.connection"
NS_HEARTBEAT = "urn:x-cast:com.google.cast.tp.heartbeat"
NS_RECEIVER = "urn:x-cast:com.google.cast.receiver"
NS_MEDIA = "urn:x-cast:com.google.cast.media"


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data


def encode(source, destination, namespace, payload):
    """A CastMessage: fields 1 and 5 written explicitly (version 0, STRING), then the strings."""
    body = (b"\x08\x00" + field(2, source.encode()) + field(3, destination.encode()) + field(4, namespace.encode())
            + b"\x28\x00" + field(6, json.dumps(payload, separators=(",", ":")).encode()))
    return struct.pack(">I", len(body)) + body


def decode(body):
    """The string fields of a CastMessage (2 source, 3 destination, 4 namespace, 6 payload)."""
    fields, offset = {}, 0
    while offset < len(body):
        key, shift = 0, 0
        while True:
            byte = body[offset]; offset += 1
            key |= (byte & 0x7F) << shift; shift += 7
            if not byte & 0x80:
                break
        number, wire = key >> 3, key & 7
        if wire == 0:
            while body[offset] & 0x80:
                offset += 1
            offset += 1
        elif wire == 2:
            length, shift = 0, 0
            while True:
                byte = body[offset]; offset += 1
                length |= (byte & 0x7F) << shift; shift += 7
                if not byte & 0x80:
                    break
            fields[number] = body[offset:offset + length]; offset += length
        else:
            raise ValueError(f"wire type {wire}")
    return {k: v.decode() for k, v in fields.items()}


class Sender:
    def __init__(self, index, latencies, errors):
        self.index, self.latencies, self.errors = index, latencies, errors
        self.source = f"sender-{index}"
        self.waiting = {}
        self.next_id = 1

    async def open(self):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        # 16 senders per source address (127.0.0.2, .3, ...: all loopback), as phones on a LAN
        # come from their own addresses: the emulator admits at most 32 links per address.
        source = f"127.0.0.{2 + self.index // 16}"
        self.reader, self.writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", PORT, ssl=context, local_addr=(source, 0)), TIMEOUT)
        self.reading = asyncio.create_task(self.read())

    async def read(self):
        try:
            while True:
                size = struct.unpack(">I", await self.reader.readexactly(4))[0]
                message = decode(await self.reader.readexactly(size))
                payload = json.loads(message.get(6, "{}"))
                kind = payload.get("type")
                if message.get(4) == NS_HEARTBEAT and kind == "PING":
                    self.writer.write(encode(message[3], message[2], NS_HEARTBEAT, {"type": "PONG"}))
                    continue
                key = "PONG" if kind == "PONG" else payload.get("requestId")
                future = self.waiting.pop(key, None)
                if future and not future.done():
                    future.set_result(payload)
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError) as error:
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"sender {self.index}: link ended: {error!r}"))

    def send(self, destination, namespace, payload):
        self.writer.write(encode(self.source, destination, namespace, payload))

    async def request(self, destination, namespace, payload, expect):
        key = "PONG" if payload["type"] == "PING" else self.next_id
        if key != "PONG":
            payload = dict(payload, requestId=self.next_id)
            self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[key] = future
        start = time.perf_counter()
        self.send(destination, namespace, payload)
        answer = await asyncio.wait_for(future, TIMEOUT)
        self.latencies.append((time.perf_counter() - start) * 1000)
        if answer.get("type") != expect:
            raise ValueError(f"sender {self.index}: expected {expect}, got {answer.get('type')}")
        return answer

    async def close(self):
        self.reading.cancel()
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (ConnectionError, ssl.SSLError):
            pass


async def run_sender(index, start_gate, latencies, errors):
    sender = Sender(index, latencies, errors)
    try:
        await sender.open()
        await start_gate.wait()
        sender.send("receiver-0", NS_CONNECTION, {"type": "CONNECT"})
        status = await sender.request("receiver-0", NS_RECEIVER, {"type": "GET_STATUS"}, "RECEIVER_STATUS")
        transport = status["status"]["applications"][0]["transportId"]
        sender.send(transport, NS_CONNECTION, {"type": "CONNECT"})
        for round_number in range(ROUNDS):
            await asyncio.sleep(random.uniform(0.05, 0.15))
            await sender.request("receiver-0", NS_HEARTBEAT, {"type": "PING"}, "PONG")
            await sender.request(transport, NS_MEDIA, {"type": "GET_STATUS"}, "MEDIA_STATUS")
            if round_number % 5 == 4:
                await sender.request("receiver-0", NS_RECEIVER, {"type": "GET_STATUS"}, "RECEIVER_STATUS")
    except Exception as error:  # every failure is counted and shown, none stops the others
        errors.append(f"sender {index}: {error!r}")
    finally:
        if hasattr(sender, "writer"):
            await sender.close()


def memory(pid):
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmHWM:", "VmRSS:")):
                values[line.split(":")[0]] = int(line.split()[1]) / 1024
    return values


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100


async def launch():
    launcher = Sender(-1, [], [])
    await launcher.open()
    launcher.send("receiver-0", NS_CONNECTION, {"type": "CONNECT"})
    await launcher.request("receiver-0", NS_RECEIVER, {"type": "LAUNCH", "appId": "CC1AD845"}, "RECEIVER_STATUS")
    await launcher.close()


async def run_senders(indexes, start_at):
    """One client process: its senders open their links, wait for the common start, then run."""
    latencies, errors = [], []
    gate = asyncio.Event()
    tasks = [asyncio.create_task(run_sender(index, gate, latencies, errors)) for index in indexes]
    await asyncio.sleep(max(0, start_at - time.time()))
    gate.set()
    await asyncio.gather(*tasks)
    return latencies, errors


def worker(arguments):
    indexes, start_at = arguments
    random.seed(indexes[0] if indexes else 0)
    return asyncio.run(run_senders(indexes, start_at))


def main():
    asyncio.run(launch())
    before = memory(PID)["VmRSS"]
    cpu_before = cpu_seconds(PID)
    groups = [list(range(SENDERS))[part::PROCESSES] for part in range(PROCESSES)]
    # Every process opens its links first; the requests start together, 2 s from now.
    start_at = time.time() + 2
    with multiprocessing.Pool(PROCESSES) as pool:
        outcomes = pool.map(worker, [(group, start_at) for group in groups])
    elapsed = time.time() - start_at
    latencies = [value for outcome in outcomes for value in outcome[0]]
    errors = [error for outcome in outcomes for error in outcome[1]]
    after = memory(PID)
    ordered = sorted(latencies)
    p = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")
    print(f"senders: {SENDERS} concurrent from {PROCESSES} client processes, {ROUNDS} rounds each, "
          f"{len(latencies)} request/answer pairs in {elapsed:.1f} s")
    print(f"latency: p50 {p(0.5):.2f} ms, p99 {p(0.99):.2f} ms, max {ordered[-1] if ordered else float('nan'):.2f} ms"
          f" (mean {statistics.mean(ordered) if ordered else float('nan'):.2f} ms)")
    print(f"emulator memory: {before:.1f} MB before the senders, peak {after['VmHWM']:.1f} MB, {after['VmRSS']:.1f} MB after")
    print(f"emulator CPU: {cpu_seconds(PID) - cpu_before:.2f} s during the run")
    print(f"errors: {len(errors)}")
    for error in errors[:10]:
        print("  " + error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
