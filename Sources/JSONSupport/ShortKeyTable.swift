import Glibc

/// A fixed table of values keyed by short strings (member names, MIME type essences, file
/// extensions), looked up straight from the key's bytes.
///
/// A `Dictionary<String, …>` hashes the whole key with SipHash on every lookup: about 400
/// instructions for `application/x-mpegurl`, and `castprep load` asks several such tables for
/// each of its items. Here the keys are grouped by length, and a lookup compares the few keys
/// of the asked length byte for byte: a few dozen instructions, and none at all for a key of
/// a length no entry has. Keys are compared exactly (callers fold case first where it does
/// not matter).
///
/// ```swift
/// let families = ShortKeyTable([("video/mp4", 1), ("application/dash+xml", 2)])
/// families["video/mp4"]        // 1
/// families["video/webm"]       // nil
/// ```
public struct ShortKeyTable<Value: Sendable>: Sendable {
    // Inlinable, with its storage, so that each client module gets a copy specialized for
    // its `Value`: unspecialized, every lookup asked the runtime for the generic metadata.

    /// Every key's bytes, one after another, shortest keys first.
    @usableFromInline let keyBytes: [UInt8]
    /// The entries in the order of their keys in ``keyBytes``.
    @usableFromInline let entries: [(start: Int, value: Value)]
    /// For each length, the range of ``entries`` whose keys have it.
    @usableFromInline let byLength: [Range<Int>]

    /// The table of `pairs`; when a key appears twice, the first value is kept.
    @inlinable
    public init(_ pairs: some Sequence<(String, Value)>) {
        var unique: [(key: [UInt8], value: Value)] = []
        for (key, value) in pairs where !unique.contains(where: { $0.key.elementsEqual(key.utf8) }) {
            unique.append((Array(key.utf8), value))
        }
        unique.sort { $0.key.count < $1.key.count }
        var keyBytes: [UInt8] = []
        var entries: [(start: Int, value: Value)] = []
        let longest = unique.last?.key.count ?? 0
        var byLength = Array(repeating: 0..<0, count: longest + 1)
        for (key, value) in unique {
            let first = byLength[key.count].isEmpty ? entries.count : byLength[key.count].lowerBound
            entries.append((keyBytes.count, value))
            keyBytes += key
            byLength[key.count] = first..<entries.count
        }
        self.keyBytes = keyBytes
        self.entries = entries
        self.byLength = byLength
    }

    /// The value of the key whose UTF-8 bytes are `bytes`; nil when there is none.
    @inlinable
    public func value(forKeyBytes bytes: UnsafeBufferPointer<UInt8>) -> Value? {
        let length = bytes.count
        guard length < byLength.count, !byLength[length].isEmpty else { return nil }
        guard let key = bytes.baseAddress, length > 0 else { return entries[byLength[0].lowerBound].value }
        let range = byLength[length]
        return keyBytes.withUnsafeBufferPointer { stored -> Value? in
            entries.withUnsafeBufferPointer { entries -> Value? in
                // The first byte tells most keys of a length apart; the rest is compared only
                // for a key that starts alike.
                for position in range {
                    let candidate = stored.baseAddress.unsafelyUnwrapped + entries[position].start
                    if candidate[0] == key[0], bytesEqual(candidate, key, count: length) {
                        return entries[position].value
                    }
                }
                return nil
            }
        }
    }

    /// The value of `key`; nil when there is none.
    @inlinable
    public subscript(key: String) -> Value? {
        key.withUTF8Bytes { value(forKeyBytes: $0) }
    }
}

extension ShortKeyTable where Value == Bool {
    /// A set of short strings: each of `keys` maps to true.
    @inlinable
    public init(keys: some Sequence<String>) {
        self.init(keys.lazy.map { ($0, true) })
    }

    /// Whether `key` is one of the table's keys.
    @inlinable
    public func contains(_ key: String) -> Bool { self[key] ?? false }
}

/// Whether the `count` bytes at `first` and `second` are the same (`memcmp`, reachable from
/// the inlinable lookup above, which cannot name the C library itself).
@usableFromInline
func bytesEqual(_ first: UnsafePointer<UInt8>, _ second: UnsafePointer<UInt8>, count: Int) -> Bool {
    memcmp(first, second, count) == 0
}
