import Foundation
import Glibc

/// A loopback server that is not a Cast device, for tests of what a sender says when an
/// address or port is wrong. A python3 process listens on 127.0.0.1 at a free port and answers
/// every connection the way `kind` says; the process is killed when the value is dropped.
public final class ForeignServer: Sendable {
    /// How the server answers.
    public enum Kind: String, Sendable, CaseIterable {
        /// Plain TCP, reads the request (a TLS ClientHello) and answers `HTTP/1.1 400`, as a
        /// web server on a wrong port does.
        case http
        /// Plain TCP, greets with an SSH banner before reading anything.
        case banner
        /// TLS (a fresh self-signed certificate), answers `HTTP/1.1 400` inside TLS, as an HTTPS
        /// server does to a CASTV2 frame.
        case https
        /// TLS, answers with binary bytes that are no CASTV2 frame.
        case tlsBinary = "tls-binary"
        /// Plain TCP, reads and never answers.
        case silent
    }

    private let process = Process()
    /// The port it listens on, on 127.0.0.1.
    public let port: Int

    /// Starts the server and waits, on a thread of its own, until it listens.
    public init(_ kind: Kind) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", Self.script, kind.rawValue]
        process.standardError = FileHandle.nullDevice
        port = try await process.runReadingAnnouncedPort()
        if port == 0 {
            await ChildProcess.kill(process)
            throw CocoaError(
                .featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "the \(kind) server did not start"])
        }
    }

    /// SIGKILL; Foundation reaps the child on its own thread, so nothing here waits.
    deinit {
        kill(process.processIdentifier, SIGKILL)
    }

    private static let script = #"""
        import os, shutil, socket, ssl, subprocess, sys, tempfile, threading
        mode = sys.argv[1]
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        context = None
        if mode in ("https", "tls-binary"):
            directory = tempfile.mkdtemp()
            key, cert = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-subj", "/CN=localhost", "-days", "1", "-keyout", key, "-out", cert], check=True, capture_output=True)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            shutil.rmtree(directory)
        print(listener.getsockname()[1], flush=True)
        def serve(connection):
            try:
                connection.settimeout(20)
                if mode == "banner":
                    connection.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
                    connection.recv(4096)
                elif mode == "silent":
                    while connection.recv(4096):
                        pass
                else:
                    if context:
                        connection = context.wrap_socket(connection, server_side=True)
                    connection.recv(4096)
                    if mode == "tls-binary":
                        connection.sendall(bytes([0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4]))
                    else:
                        connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    # Read on until the client hangs up, as web servers linger: closing with the
                    # client's later records unread would reset the connection, and the reset can
                    # discard the answer before the client reads it.
                    connection.settimeout(5)
                    while connection.recv(4096):
                        pass
            except Exception:
                pass
            finally:
                connection.close()
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=serve, args=(connection,), daemon=True).start()
        """#
}
