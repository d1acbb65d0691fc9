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

    @Test("counts recorded in any order give the totals before each piece once the pieces before it are in")
    func runningTotals() throws {
        let sizes = (0..<300).map { ($0 * 7919) % 13 }
        let totals = RunningTotals(count: sizes.count, start: 5)
        var starts: [Int] = []
        var running = 5
        for size in sizes {
            starts.append(running)
            running += size
        }
        let expected = starts
        // Pieces done on three threads record as they finish; each checks a guess from the
        // latest known total, and the consumer (in order) sees every start.
        starts = []
        try OrderedWork.run(
            count: sizes.count, workers: 3, window: 6,
            { index in
                let known = totals.latestTotal(atOrBefore: index)
                #expect(known.piece <= index && known.total == expected[known.piece])
                totals.record(count: sizes[index], of: index)
                if let start = totals.knownTotal(before: index) { #expect(start == expected[index]) }
                return index
            }
        ) { index, _ in
            starts.append(totals.knownTotal(before: index) ?? -1)
        }
        #expect(starts == expected)
        #expect(totals.knownTotal(before: sizes.count) == running)
        let latest = totals.latestTotal(atOrBefore: sizes.count)
        #expect(latest.piece == sizes.count && latest.total == running)
    }

    @Test("a total past a piece that has not recorded stays unknown")
    func latestBeforeAny() {
        let totals = RunningTotals(count: 10, start: 3)
        let latest = totals.latestTotal(atOrBefore: 7)
        #expect(latest.piece == 0 && latest.total == 3)
        totals.record(count: 4, of: 2)
        #expect(totals.latestTotal(atOrBefore: 7).piece == 0)
        #expect(totals.knownTotal(before: 3) == nil)
        totals.record(count: 6, of: 0)
        #expect(totals.latestTotal(atOrBefore: 7).piece == 1)
        totals.record(count: 1, of: 1)
        // Pieces 0, 1 and 2 are in: the totals before 1, 2 and 3 are known.
        #expect(totals.latestTotal(atOrBefore: 7) == (piece: 3, total: 14))
        #expect(totals.knownTotal(before: 2) == 10)
        #expect(totals.knownTotal(before: 4) == nil)
    }
}
