#!/usr/bin/env python3
"""Cross-checks CastPrep's CASTV2 codec and TLS server with pychromecast's CastMessage protobuf.

  channel_pb.py encode            JSON messages on stdin -> one hex CastMessage per line
  channel_pb.py decode            hex CastMessages on stdin -> one JSON message per line
  channel_pb.py client PORT       TLS client against 127.0.0.1:PORT (framing written here)

Exit status 2 means pychromecast is not installed (pip install pychromecast).
"""
import json
import socket
import ssl
import struct
import sys

try:
    from pychromecast.generated import cast_channel_pb2 as pb
except ImportError:
    print("pychromecast is not installed", file=sys.stderr)
    sys.exit(2)


def to_proto(spec):
    message = pb.CastMessage()
    message.protocol_version = pb.CastMessage.CASTV2_1_0
    message.source_id = spec["source"]
    message.destination_id = spec["destination"]
    message.namespace = spec["namespace"]
    if "binary" in spec:
        message.payload_type = pb.CastMessage.BINARY
        message.payload_binary = bytes.fromhex(spec["binary"])
    else:
        message.payload_type = pb.CastMessage.STRING
        message.payload_utf8 = spec["text"]
    return message


def to_json(message):
    result = {"source": message.source_id, "destination": message.destination_id, "namespace": message.namespace,
              "version": message.protocol_version}
    if message.payload_type == pb.CastMessage.BINARY:
        result["binary"] = message.payload_binary.hex()
    else:
        result["text"] = message.payload_utf8
    return result


def read_exactly(stream, count):
    data = b""
    while len(data) < count:
        chunk = stream.recv(count - len(data))
        if not chunk:
            raise EOFError("connection closed")
        data += chunk
    return data


def send(stream, spec):
    body = to_proto(spec).SerializeToString()
    stream.sendall(struct.pack(">I", len(body)) + body)


def receive(stream):
    (length,) = struct.unpack(">I", read_exactly(stream, 4))
    message = pb.CastMessage()
    message.ParseFromString(read_exactly(stream, length))
    return message


def client(port):
    """Plays a sender the way pychromecast's socket client does: no certificate checks,
    CONNECT, a PING, one request; prints every message received as JSON, one per line."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    # Generous: the whole test suite runs in parallel on two cores, and the answer comes from a test task.
    with socket.create_connection(("127.0.0.1", port), timeout=60) as raw:
        with context.wrap_socket(raw) as stream:
            connection = "urn:x-cast:com.google.cast.tp.connection"
            heartbeat = "urn:x-cast:com.google.cast.tp.heartbeat"
            send(stream, {"source": "sender-0", "destination": "receiver-0", "namespace": connection,
                          "text": json.dumps({"type": "CONNECT", "origin": {}, "userAgent": "PyChromecast"})})
            send(stream, {"source": "sender-0", "destination": "receiver-0", "namespace": heartbeat,
                          "text": json.dumps({"type": "PING"})})
            send(stream, {"source": "sender-0", "destination": "receiver-0",
                          "namespace": "urn:x-cast:com.google.cast.receiver",
                          "text": json.dumps({"type": "GET_STATUS", "requestId": 1}, ensure_ascii=False)})
            seen = set()
            while not {"PONG", "RECEIVER_STATUS"} <= seen:
                message = receive(stream)
                print(json.dumps(to_json(message)), flush=True)
                seen.add(json.loads(message.payload_utf8).get("type") if message.payload_utf8 else "binary")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "encode":
        for spec in json.load(sys.stdin):
            print(to_proto(spec).SerializeToString().hex())
    elif mode == "decode":
        for line in sys.stdin.read().split():
            message = pb.CastMessage()
            message.ParseFromString(bytes.fromhex(line))
            print(json.dumps(to_json(message), ensure_ascii=False))
    elif mode == "client" and len(sys.argv) == 3:
        client(int(sys.argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)


if __name__ == "__main__":
    main()
