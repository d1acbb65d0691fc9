import SystemIO
import Foundation
import Synchronization
import Testing

/// What a writer handed to its sink, batch by batch.
final class RecordingSink: Sendable {
    private let batches = Mutex<[String]>([])

    var sink: @Sendable (String) -> Void {
        { [self] batch in batches.withLock { $0.append(batch) } }
    }

    var writes: Int { batches.withLock { $0.count } }
    var lines: [String] {
        batches.withLock { $0.joined() }.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(
            String.init)
    }
    var text: String { batches.withLock { $0.joined() } }

    /// Waits (on the calling thread) up to `seconds` for `lines` to reach `count`.
    func waitForLines(_ count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if lines.count >= count { return true }
            usleep(2000)
        }
        return lines.count >= count
    }
}

/// Runs blocking work on a thread of its own, never on Swift's cooperative pool.
private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

@Suite("Batched line writer")
struct BatchedLineWriterTests {
    @Test("one producer's lines arrive whole and in order, in far fewer writes than lines")
    func orderFromOneProducer() async {
        let recorded = RecordingSink()
        let writer = BatchedLineWriter(interval: .milliseconds(20), sink: recorded.sink)
        let expected = (0..<5000).map { "line \($0) \"GET /a%20b.mp4\" 200" }
        await onOwnThread {
            for line in expected { writer.append(line) }
            writer.stop()
        }
        #expect(recorded.lines == expected)
        #expect(recorded.writes < expected.count / 10, "\(recorded.writes) writes for \(expected.count) lines")
        #expect(recorded.text.hasSuffix("\n"))
    }

    @Test("lines from several threads all arrive once, each thread's in its order")
    func orderFromManyProducers() async {
        let recorded = RecordingSink()
        let writer = BatchedLineWriter(interval: .milliseconds(5), sink: recorded.sink)
        let producers = 4, perProducer = 3000
        await onOwnThread {
            DispatchQueue.concurrentPerform(iterations: producers) { producer in
                for index in 0..<perProducer { writer.append("\(producer) \(index)") }
            }
            writer.stop()
        }
        let lines = recorded.lines
        #expect(lines.count == producers * perProducer)
        var next = Array(repeating: 0, count: producers)
        for line in lines {
            let fields = line.split(separator: " ").compactMap { Int($0) }
            guard fields.count == 2, fields[0] < producers, fields[1] == next[fields[0]] else {
                Issue.record("out of order or torn: \(line), expected \(next)")
                return
            }
            next[fields[0]] += 1
        }
        #expect(next == Array(repeating: perProducer, count: producers))
    }

    @Test("a line appended to an idle writer is written at once, without waiting for the interval")
    func idleLineIsPrompt() async {
        let recorded = RecordingSink()
        let writer = BatchedLineWriter(interval: .seconds(30), sink: recorded.sink)
        writer.append("first")
        #expect(await onOwnThread { recorded.waitForLines(1, seconds: 5) })
        #expect(recorded.lines == ["first"])
        writer.stop()
    }

    @Test("stop writes the lines still waiting out a pause, at once; later lines are written directly")
    func stopFlushes() async {
        let recorded = RecordingSink()
        let writer = BatchedLineWriter(interval: .seconds(30), sink: recorded.sink)
        writer.append("a")
        #expect(await onOwnThread { recorded.waitForLines(1, seconds: 5) })
        // The writer now pauses for 30 s; these wait in memory.
        writer.append("b")
        writer.append("c")
        let started = Date()
        await onOwnThread { writer.stop() }
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(recorded.lines == ["a", "b", "c"])
        writer.append("d")
        #expect(recorded.lines == ["a", "b", "c", "d"])
        writer.stop()  // a second stop does nothing
        #expect(recorded.lines == ["a", "b", "c", "d"])
    }

    @Test("flush writes everything appended so far before it returns")
    func flushWritesPending() async {
        let recorded = RecordingSink()
        let writer = BatchedLineWriter(interval: .seconds(30), sink: recorded.sink)
        writer.append("a")
        #expect(await onOwnThread { recorded.waitForLines(1, seconds: 5) })
        writer.append("b")
        writer.flush()
        #expect(recorded.lines == ["a", "b"])
        writer.stop()
    }

    @Test("a full buffer is written by the producer itself, keeping the order")
    func fullBuffer() async {
        let recorded = RecordingSink()
        let writer = BatchedLineWriter(interval: .seconds(30), capacity: 64, sink: recorded.sink)
        let expected = (0..<500).map { "entry \($0)" }
        await onOwnThread {
            for line in expected { writer.append(line) }
        }
        // Without stop or flush, at most a buffer's worth is still waiting: under 64 bytes plus
        // the line that filled it, so no more than 8 of these 9- and 10-byte lines.
        #expect(recorded.lines.count >= expected.count - 8)
        writer.stop()
        #expect(recorded.lines == expected)
    }

    @Test("dropping the writer writes what is left")
    func deinitFlushes() async {
        let recorded = RecordingSink()
        await onOwnThread {
            let writer = BatchedLineWriter(interval: .seconds(30), sink: recorded.sink)
            for index in 0..<100 { writer.append("\(index)") }
        }
        #expect(recorded.lines == (0..<100).map(String.init))
    }
}
