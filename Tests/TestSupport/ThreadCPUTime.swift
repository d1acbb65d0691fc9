import Glibc

/// The CPU time the calling thread has used so far.
///
/// For a test that bounds the cost of synchronous work (a parser fed a hostile input): the
/// work runs on the calling thread, so its CPU time is what the input cost, however busy the
/// machine is. Wall time is not: with the suite in parallel on two cores, another process can
/// hold the core for seconds.
///
/// ```swift
/// let start = threadCPUTime()
/// _ = try parse(bomb)
/// #expect(threadCPUTime() - start < .seconds(2))
/// ```
public func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
}
