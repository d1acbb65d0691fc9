/// A small deterministic random generator (SplitMix64), so property and fuzz-style tests
/// reproduce from their seed.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    /// Starts from `state` exactly.
    public init(state: UInt64) { self.state = state }

    /// Starts from a seed mixed with the golden-ratio increment, so small seeds differ well.
    public init(seed: UInt64) { self.state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }
}
