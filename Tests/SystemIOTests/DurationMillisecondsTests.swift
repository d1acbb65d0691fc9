import SystemIO
import Testing

@Suite("Duration to milliseconds")
struct DurationMillisecondsTests {
    @Test(
        "whole milliseconds, rounded up so a deadline is never early",
        arguments: [
            (Duration.zero, 0),
            (.nanoseconds(1), 1),
            (.microseconds(999), 1),
            (.milliseconds(1), 1),
            (.microseconds(1001), 2),
            (.milliseconds(50), 50),
            (.seconds(1.5), 1500),
            (.seconds(3) + .nanoseconds(1), 3001),
        ] as [(Duration, Int64)])
    func roundsUp(duration: Duration, milliseconds: Int64) {
        #expect(duration.millisecondsRoundedUp == milliseconds)
        #expect(duration.pollMilliseconds == Int32(milliseconds))
    }

    @Test(
        "a duration in the past is 0, never poll's -1",
        arguments: [
            Duration.nanoseconds(-1), .milliseconds(-1), .seconds(-2) + .milliseconds(500), .seconds(Int64.min / 2),
        ])
    func negative(duration: Duration) {
        #expect(duration.millisecondsRoundedUp == 0)
        #expect(duration.pollMilliseconds == 0)
    }

    @Test("huge durations saturate instead of overflowing")
    func huge() {
        #expect(Duration.seconds(Int64.max).millisecondsRoundedUp == .max)
        #expect(Duration.seconds(Int64.max / 1000).millisecondsRoundedUp == Int64.max / 1000 * 1000)
        #expect(Duration.seconds(Int64.max / 1000 + 1).millisecondsRoundedUp == .max)
        #expect(Duration.seconds(86_400 * 365).pollMilliseconds == .max)
    }
}
