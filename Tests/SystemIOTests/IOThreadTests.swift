import Synchronization
import SystemIO
import Testing

@Suite("IOThread")
struct IOThreadTests {
    @Test("a started thread runs its body under its name, and join waits for the body")
    func startAndJoin() throws {
        let seen = Mutex<String?>(nil)
        let thread = try IOThread.start(named: "io-test") { seen.withLock { $0 = IOThread.currentName } }
        thread.join()
        #expect(seen.withLock { $0 } == "io-test")
        #expect(thread.name == "io-test")
        // A second join returns at once.
        thread.join()
    }

    @Test(
        "a long name is cut to the 15 bytes the system keeps, on a character boundary",
        arguments: [
            ("castprep-http-transport", "castprep-http-t"),
            ("short", "short"),
            ("ééééééééé", "ééééééé"),
        ])
    func longNames(name: String, kept: String) throws {
        let seen = Mutex<String?>(nil)
        let thread = try IOThread.start(named: name) { seen.withLock { $0 = IOThread.currentName } }
        thread.join()
        #expect(thread.name == kept)
        #expect(seen.withLock { $0 } == kept)
    }

    @Test("a detached thread runs with a small stack, and nobody has to join it")
    func detached() async throws {
        let name = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            do {
                try IOThread.detach(named: "io-detached", stackSize: 1 << 16) {
                    continuation.resume(returning: IOThread.currentName)
                }
            } catch {
                continuation.resume(returning: "\(error)")
            }
        }
        #expect(name == "io-detached")
    }

    @Test("a system call error names the call and the C library's reason")
    func errorText() {
        let error = SystemCallError("pthread_create", errno: 11)
        #expect(error.message == "pthread_create: Resource temporarily unavailable (errno 11)")
    }
}
