import Synchronization
import SystemIO
import Testing

@Suite("OrderedWork and RunningTotals")
struct OrderedWorkTests {
    struct Stop: Error {}

    /// Counts of pieces started and finished, and the most ever done but not yet consumed.
    final class Tally: Sendable {
        let started = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        let consumed = Atomic<Int>(0)
        let mostAhead = Atomic<Int>(0)

        func finish() {
            let done = finished.add(1, ordering: .sequentiallyConsistent).newValue
            let ahead = done - consumed.load(ordering: .sequentiallyConsistent)
            var seen = mostAhead.load(ordering: .relaxed)
            while ahead > seen {
                let (exchanged, now) = mostAhead.compareExchange(
                    expected: seen, desired: ahead, ordering: .relaxed)
                if exchanged { break }
                seen = now
            }
        }
    }

    @Test(
        "every piece's result is consumed once, in order, on the calling thread",
        arguments: [(0, 2, 4), (1, 2, 4), (7, 1, 1), (37, 2, 2), (200, 3, 5), (64, 8, 16)])
    func inOrder(count: Int, workers: Int, window: Int) throws {
        var order: [Int] = []
        try OrderedWork.run(count: count, workers: workers, window: window, { $0 * $0 }) { index, square in
            #expect(square == index * index)
            order.append(index)
        }
        #expect(order == Array(0..<count))
    }

    @Test("workers run no further ahead of the consumer than the window", arguments: [1, 3, 6])
    func boundedWindow(window: Int) throws {
        let tally = Tally()
        try OrderedWork.run(
            count: 120, workers: 2, window: window,
            { index in
                // Uneven pieces, so workers finish out of order.
                var sum = 0
                for value in 0..<((index % 5) * 2_000) { sum &+= value }
                tally.finish()
                return sum
            }
        ) { _, _ in
            tally.consumed.add(1, ordering: .sequentiallyConsistent)
        }
        #expect(tally.finished.load(ordering: .relaxed) == 120)
        // At most `window` pieces (at least one per worker) wait, besides the one being consumed.
        #expect(tally.mostAhead.load(ordering: .relaxed) <= max(window, 2) + 1)
    }

    @Test("a consumer that throws stops the run: no piece starts after the window, and every worker has ended")
    func stopsOnError() {
        let tally = Tally()
        #expect(throws: Stop.self) {
            try OrderedWork.run(
                count: 1_000, workers: 2, window: 4,
                { index in
                    tally.started.add(1, ordering: .relaxed)
                    return index
                }
            ) { index, _ in
                if index == 10 { throw Stop() }
            }
        }
        let started = tally.started.load(ordering: .relaxed)
        // Pieces 0…10 were consumed; at most a window's worth beyond them was started.
        #expect(started >= 11 && started <= 11 + 4)
        // The workers were joined before `run` returned: nothing starts later.
        #expect(tally.started.load(ordering: .relaxed) == started)
    }

    @Test("each piece learns the total of the pieces before it, waiting for the one just before")
    func runningTotals() throws {
        let sizes = (0..<300).map { ($0 * 7919) % 13 }
        let totals = RunningTotals(count: sizes.count, start: 5)
        var starts: [Int] = []
        try OrderedWork.run(
            count: sizes.count, workers: 3, window: 6,
            { index in
                let start = totals.waitForTotal(before: index)
                totals.publish(after: index, total: start + sizes[index])
                return start
            }
        ) { _, start in starts.append(start) }
        var expected: [Int] = []
        var running = 5
        for size in sizes {
            expected.append(running)
            running += size
        }
        #expect(starts == expected)
        #expect(totals.knownTotal(before: sizes.count) == running)
        let latest = totals.latestTotal(atOrBefore: sizes.count)
        #expect(latest.piece == sizes.count && latest.total == running)
    }

    @Test("before any total is published, the latest known is the start")
    func latestBeforeAny() {
        let totals = RunningTotals(count: 10, start: 3)
        let latest = totals.latestTotal(atOrBefore: 7)
        #expect(latest.piece == 0 && latest.total == 3)
        totals.publish(after: 0, total: 9)
        #expect(totals.latestTotal(atOrBefore: 7).piece == 1)
        #expect(totals.knownTotal(before: 2) == nil)
    }
}
