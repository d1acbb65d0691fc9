import Glibc

/// Seconds on the system's monotonic clock (`CLOCK_MONOTONIC`) as a `Double`, for deadlines
/// kept in C structures that a C callback reads (FFmpeg's interrupt callback), where a
/// `ContinuousClock.Instant` cannot go.
///
/// ```swift
/// let deadline = MonotonicTime.seconds + 10
/// if MonotonicTime.seconds > deadline { stop() }
/// ```
///
/// Swift code that keeps its own deadlines uses `ContinuousClock` instead.
public enum MonotonicTime {
    /// Seconds since an arbitrary fixed point (boot, on Linux); never goes back.
    public static var seconds: Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
